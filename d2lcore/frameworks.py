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


KERNEL_ENV = {
    "TF_CPP_MIN_LOG_LEVEL": "3",  # TensorFlow's C++ log lines would end up in the outputs
    "TF_ENABLE_ONEDNN_OPTS": "0",  # also makes TensorFlow's CPU results reproducible
    "PYTHONHASHSEED": "0",
    "PYTHONWARNINGS": "ignore::DeprecationWarning,ignore::FutureWarning",
}
"""Environment variables of every framework kernel of the book."""

REGISTRY = {
    fw.name: fw
    for fw in (
        # One OpenMP thread: on a 2-core machine a second thread made the section 4 and 7 training runs slower
        # (100 vs 89 s and 53 vs 44 s), and 10-40 times slower when another process was busy (spin-waiting).
        Framework("mxnet", "d2lcore.mxnet", "MXNet", "mxnet", {"OMP_NUM_THREADS": "1"}),
        # PyTorch likewise: with 2 intra-op threads a busy core made the section 4 run 19 times slower (999 vs 53 s),
        # and on a quiet machine 1 thread was faster too (11.4 vs 13.6-14.4 s for 50 Bahdanau epochs).
        Framework("pytorch", "d2lcore.torch", "PyTorch", "torch", {"OMP_NUM_THREADS": "1"}),
        Framework("tensorflow", "d2lcore.tensorflow", "TensorFlow", "tensorflow"),
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
