"""The public interface of ``d2lcore``, written down once.

``d2lcore.mxnet``, ``d2lcore.torch`` and ``d2lcore.tensorflow`` each provide exactly the names below, with these
signatures (``tests/test_interface.py`` checks it). For a layer, ``forward`` stands for the computation that
calling the layer runs: ``forward`` in MXNet and PyTorch, ``call`` in Keras. Names marked *neutral* are one
framework-neutral object that every module re-exports.

This module is documentation and a contract: it imports no framework and nothing here is meant to be called.
"""

# --- neutral: plotting, timing, checks ----------------------------------------------------------------------


def show_heatmaps(matrices, xlabel, ylabel, titles=None, figsize=(2.5, 2.5), cmap="Reds"):
    """*neutral.* A grid of heatmaps; matrices: (num_rows, num_cols, num_queries, num_keys), any framework."""


def plot(
    X,
    Y=None,
    xlabel=None,
    ylabel=None,
    legend=None,
    xlim=None,
    ylim=None,
    xscale="linear",
    yscale="linear",
    fmts=("-", "m--", "g-.", "r:"),
    figsize=(3.5, 2.5),
    axes=None,
):
    """*neutral.* Line plot of one or several series (1-D tensors or lists of them)."""


def set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend):
    """*neutral.* Configure matplotlib axes."""


def set_figsize(figsize=(3.5, 2.5)):
    """*neutral.* Default figure size, in inches."""


def use_svg_display():
    """*neutral.* Show notebook figures as SVG."""


plt = "matplotlib.pyplot"
"""*neutral.* matplotlib's pyplot module."""


class Animator:
    """*neutral.* A training curve that redraws in place in a notebook."""

    def __init__(
        self,
        xlabel=None,
        ylabel=None,
        legend=None,
        xlim=None,
        ylim=None,
        xscale="linear",
        yscale="linear",
        fmts=("-", "m--", "g-.", "r:"),
        nrows=1,
        ncols=1,
        figsize=(3.5, 2.5),
    ): ...

    def add(self, x, y):
        """Add a point to each curve."""


class Timer:
    """*neutral.* Wall-clock timer over several runs."""

    def __init__(self): ...

    def start(self): ...

    def stop(self): ...

    def avg(self): ...

    def sum(self): ...

    def cumsum(self): ...


def check_shapes(**named):
    """*neutral.* ``check_shapes(keys=(k, "n m"), ...)``: check shapes against named dimensions; return the sizes."""


def to_numpy(x):
    """*neutral.* Any framework's tensor as a NumPy array."""


# --- per framework: random seeds and devices ------------------------------------------------------------------


def set_seed(seed):
    """Seed Python's, NumPy's and the framework's random number generators."""


def num_gpus():
    """The number of GPUs the framework can use."""


def cpu():
    """The framework's CPU device object."""


def try_gpu(i=0):
    """GPU ``i`` if it exists, else the CPU, as the framework's device object (never a context manager):
    ``torch.device``, ``mxnet.Context`` or ``tf.config.LogicalDevice``."""


# --- per framework: section 2, attention pooling by Nadaraya–Watson kernel regression ------------------------


class NWKernelRegression:
    """Nadaraya–Watson regression with a learnable Gaussian kernel width ``w`` (initialised to 1).

    After a forward pass, ``attention_weights`` holds the (n, m) weights of the last call.
    """

    def __init__(self): ...

    def forward(self, queries, keys, values):
        """queries: (n,); keys, values: (n, m) -> predictions (n,)."""


def train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    """Full-batch SGD on sum_i (f(x_i) - y_i)^2 / 2 with a live loss curve; returns the per-epoch losses."""
