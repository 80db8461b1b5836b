"""d2lcore for PyTorch. The public names and signatures are those of :mod:`d2lcore.interface`."""

from d2lcore.common import *  # noqa: F403
from d2lcore.common import __all__ as _common

from .attention import AdditiveAttention, DotProductAttention, masked_softmax
from .kernel_regression import NWKernelRegression, train_nw
from .runtime import cpu, num_gpus, set_seed, try_gpu

__all__ = [
    *_common,
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
    "NWKernelRegression",
    "cpu",
    "num_gpus",
    "set_seed",
    "train_nw",
    "try_gpu",
]
