"""One record per framework: every fact about a framework that the library, the book's tools, the benchmarks
and the tests need, in one place (after einops' backend registry).

Framework-neutral: importing this module imports no framework.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Framework:
    """What the rest of the project knows about one framework."""

    name: str
    """The framework's name in the book: ``mxnet``, ``pytorch`` or ``tensorflow`` (cell tags, URLs, folders)."""
    module: str
    """The ``d2lcore`` module that implements the interface for it."""
    label: str
    """How the book writes its name (tab labels, links)."""
    extra: str
    """The pip extra of ``d2lcore`` that installs it: ``pip install "d2lcore[<extra>]"``."""
    forward: str
    """The method that calling one of its layers runs (``forward``; Keras: ``call``)."""
    tensor: str
    """The function that makes one of its tensors from a NumPy array, as ``module.function``."""
    kernel_env: dict = field(default_factory=dict)
    """Environment variables of its Jupyter kernel, on top of :data:`KERNEL_ENV`."""

    @property
    def alias(self):
        """The last part of :attr:`module` (``torch`` for ``d2lcore.torch``)."""
        return self.module.rpartition(".")[2]

    @property
    def import_line(self):
        """The line a notebook of this framework starts its code with."""
        return f"from d2lcore import {self.alias} as d2l"

    @property
    def kernel(self):
        """The name of its Jupyter kernel."""
        return f"d2l-{self.name}"

    @property
    def kernel_display_name(self):
        return f"Python 3 ({self.label})"


QUIET_TENSORFLOW = {
    "TF_CPP_MIN_LOG_LEVEL": "2",  # TensorFlow's C++ start-up lines (info, warnings) would end up in the outputs
    "TF_ENABLE_ONEDNN_OPTS": "0",  # and the notice that its oneDNN operations are on
}
"""What keeps TensorFlow's start-up log lines out of the book's outputs, in the book's kernels only: its errors
still show. Importing ``d2lcore.tensorflow`` sets nothing, so a reader's own kernel shows TensorFlow's lines."""

KERNEL_ENV = {
    **QUIET_TENSORFLOW,
    "PYTHONHASHSEED": "0",
    "PYTHONWARNINGS": "ignore::DeprecationWarning,ignore::FutureWarning",
}
"""Environment variables of every framework kernel of the book."""

REGISTRY = {
    fw.name: fw
    for fw in (
        # No thread settings in the kernels: d2lcore chooses the CPU threads when it is imported, in any kernel
        # (d2lcore.threads), so the book runs as a reader's plain python3 kernel does.
        Framework(
            "mxnet", "d2lcore.mxnet", "MXNet", "mxnet", "forward", "mxnet.numpy.array"
        ),
        Framework(
            "pytorch", "d2lcore.torch", "PyTorch", "torch", "forward", "torch.tensor"
        ),
        Framework(
            "tensorflow",
            "d2lcore.tensorflow",
            "TensorFlow",
            "tensorflow",
            "call",
            "tensorflow.constant",
        ),
    )
}
"""Every framework by name, in the order the book shows them."""

FRAMEWORKS = tuple(REGISTRY)
"""The frameworks' names, in the order the book shows them."""


def get(name):
    """The record of framework ``name``; a ValueError lists the known names otherwise."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"framework must be one of {', '.join(FRAMEWORKS)}; got {name!r}"
        ) from None
