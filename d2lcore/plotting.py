"""Plotting helpers shared by all frameworks: line plots, attention heatmaps and a live training curve.

Every function accepts tensors of any of the three frameworks (they are converted with :func:`to_numpy`).
"""

import math

import numpy as np
from matplotlib import pyplot as plt

from d2lcore.contracts.engine import checked
from d2lcore.convert import to_numpy


def _in_notebook():
    """Whether we run inside an IPython kernel (a notebook), where figures can be displayed."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def use_svg_display():
    """Show figures in notebooks as SVG, which stays sharp at any zoom."""
    if _in_notebook():
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("svg", metadata={"Date": None})


def set_figsize(figsize=(3.5, 2.5)):
    """Set matplotlib's default figure size, in inches, for the figures that follow (a global setting, which
    the book's own functions leave alone: they give each figure its size)."""
    use_svg_display()
    plt.rcParams["figure.figsize"] = figsize


def set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend):
    """Set the labels, limits, scales and legend of matplotlib ``axes``."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_xscale(xscale)
    axes.set_yscale(yscale)
    axes.set_xlim(xlim)
    axes.set_ylim(ylim)
    if legend:
        axes.legend(legend)
    axes.grid()


def _as_series(X):
    """Turn one series or a list of series into a list of 1-D NumPy arrays."""
    if isinstance(X, list | tuple) and len(X) and np.ndim(to_numpy(X[0])) > 0:
        return [np.asarray(to_numpy(x)).reshape(-1) for x in X]
    x = np.asarray(to_numpy(X))
    if x.ndim == 2:  # a matrix holds one series per row
        return list(x)
    return [x.reshape(-1)]


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
    """Plot one or several series.

    ``X`` and ``Y`` are 1-D tensors or lists of them (a 2-D tensor holds one series per row). With ``Y`` omitted,
    each series of ``X`` is plotted against its index. One ``X`` may serve several ``Y`` series.
    """
    if Y is None:
        Y, X = _as_series(X), None
    else:
        Y = _as_series(Y)
    X = [np.arange(len(y)) for y in Y] if X is None else _as_series(X)
    if len(X) == 1 and len(Y) > 1:
        X = X * len(Y)
    if len(X) != len(Y):
        raise ValueError(
            f"X has {len(X)} series but Y has {len(Y)}: give one X for all, or one per Y"
        )
    for i, (x, y) in enumerate(zip(X, Y, strict=True)):
        if len(x) != len(y):
            raise ValueError(f"series {i}: X has {len(x)} points but Y has {len(y)}")
    use_svg_display()
    if axes is None:  # a new figure of this size; later plt.plot() calls draw on it too
        axes = plt.figure(figsize=figsize).gca()
    axes.cla()
    for x, y, fmt in zip(X, Y, fmts * len(Y)):
        axes.plot(x, y, fmt)
    set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend)
    return axes


def _heatmap_size(num_rows, num_cols, num_queries, num_keys, titles=False):
    """The size in inches of a figure with a grid of num_rows x num_cols heatmaps, each of
    num_queries rows and num_keys columns: about 0.3 inch per row and column of a matrix,
    each panel at least 2 inches wide and 1 inch tall, so that small matrices stay
    readable; a grid wider than 9.5 inches (the book's text column) gets narrower panels."""
    panel_w = min(max(0.3 * num_keys, 2.0), 3.5)
    panel_h = min(max(0.3 * num_queries, 1.0), 3.5)
    # room for the axis labels, the ticks, the titles and the colour bar
    extra_w, extra_h = 1.4, 0.9 + 0.3 * bool(titles)
    panel_w = max(min(panel_w, (9.5 - extra_w) / num_cols), 1.0)
    return extra_w + num_cols * panel_w, extra_h + num_rows * panel_h


@checked
def show_heatmaps(matrices, xlabel, ylabel, titles=None, figsize=None, cmap="Reds"):
    """Draw a grid of heatmaps, e.g. of attention weights.

    matrices: shape (num_rows, num_cols, num_queries, num_keys). Panel (i, j) of the
    grid shows matrices[i, j], one row per query and one column per key. All panels
    share one colour scale, from min(0, smallest entry) to the largest entry, and one
    colour bar. ``titles`` label the columns of the grid. Without ``figsize`` (inches),
    the size follows the shape (:func:`_heatmap_size`).
    """
    matrices = to_numpy(matrices)
    num_rows, num_cols, num_queries, num_keys = matrices.shape
    vmin, vmax = min(matrices.min(), 0), matrices.max()
    if figsize is None:
        figsize = _heatmap_size(num_rows, num_cols, num_queries, num_keys, titles)
    use_svg_display()
    fig, axes = plt.subplots(
        num_rows,
        num_cols,
        figsize=figsize,
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for i, (row_axes, row_matrices) in enumerate(zip(axes, matrices)):
        for j, (ax, matrix) in enumerate(zip(row_axes, row_matrices)):
            # aspect="auto": the panel fills its share of the figure, whatever the matrix's shape
            pcm = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if titles:
                ax.set_title(titles[j])
    # rows and columns are positions: ticks at whole numbers only (the panels share their axes)
    axes[0, 0].locator_params(integer=True)
    # a bar about 0.15 inch wide, as tall as the grid
    fig.colorbar(pcm, ax=axes, aspect=max(figsize[1] - 0.9, 1.0) / 0.15, pad=0.02)
    return fig


class Animator:
    """A training curve that redraws in place as points are added.

    In a notebook the figure is displayed once and then updated, so the cell's other output stays; outside a
    notebook (a script, a test) the points are only recorded.
    """

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
    ):
        use_svg_display()
        self.fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False)
        self.axes = axes[0, 0]
        plt.close(
            self.fig
        )  # we display it ourselves; the notebook must not show it again at the cell's end
        self.config = dict(
            xlabel=xlabel,
            ylabel=ylabel,
            xlim=xlim,
            ylim=ylim,
            xscale=xscale,
            yscale=yscale,
            legend=legend,
        )
        self.fmts = fmts
        self.X, self.Y = None, None
        self._handle = None

    def add(self, x, y, draw=True):
        """Add one point to each curve: ``y`` is a number or a list with one number per curve.

        With ``draw=False`` the point is only recorded, and shown at the next drawing: in a notebook each drawing
        renders and sends the whole figure (about 50 ms as SVG), so a long loop may draw only now and then, and
        last, without changing the final figure."""
        ys = list(y) if isinstance(y, list | tuple) else [y]
        xs = list(x) if isinstance(x, list | tuple) else [x] * len(ys)
        if self.X is None:
            self.X, self.Y = [[] for _ in ys], [[] for _ in ys]
        if len(ys) != len(self.Y):
            raise ValueError(
                f"this Animator draws {len(self.Y)} curve(s); add() got {len(ys)} value(s)"
            )
        for i, (a, b) in enumerate(zip(xs, ys, strict=True)):
            if a is not None and b is not None:
                self.X[i].append(float(a))
                self.Y[i].append(float(b))
        if draw:
            self.draw()

    def add_epoch(self, epoch, num_epochs, y, every=10, max_draws=10):
        """In a training loop over ``num_epochs`` epochs, after epoch ``epoch`` (counted from 1): add the point
        ``(epoch, y)`` after the first epoch, every ``every`` epochs (in a run of fewer than ``10 * every`` epochs,
        every ``ceil(num_epochs / 10)``, so that a short run still gets about ten points) and after the last, and
        draw at most ``max_draws`` times, last after the last epoch, with every point."""
        every = min(every, math.ceil(num_epochs / 10))
        last = epoch == num_epochs
        if epoch % every and epoch != 1 and not last:
            return
        draw_every = every * math.ceil(num_epochs / (every * max_draws))
        self.add(epoch, y, draw=last or epoch % draw_every == 0)

    def draw(self):
        """Draw the curves with all the points added so far (in a notebook, in place of the last drawing)."""
        self.axes.cla()
        curves = (self.X, self.Y) if self.X is not None else ([], [])
        for xs_i, ys_i, fmt in zip(*curves, self.fmts * len(curves[1])):
            self.axes.plot(xs_i, ys_i, fmt)
        set_axes(self.axes, **self.config)
        if _in_notebook():
            from IPython.display import display

            if self._handle is None:
                self._handle = display(self.fig, display_id=True)
            else:
                self._handle.update(self.fig)
