"""One record per framework: what the library says about each of the three frameworks it implements (after
einops' backend registry). The book's build facts about them (kernels, their environment) are in ``booktools``.

Framework-neutral: importing this module imports no framework.
"""

from dataclasses import dataclass


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


REGISTRY = {
    fw.name: fw
    for fw in (
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
