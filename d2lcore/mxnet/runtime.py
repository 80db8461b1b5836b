"""Random seeds and devices for MXNet."""

import random

import mxnet as mx
import numpy as np

from d2lcore.contracts.engine import check_int


def set_seed(seed):
    """Seed Python's, NumPy's and MXNet's random number generators (on every device)."""
    check_int("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    mx.random.seed(seed)


def num_gpus():
    """The number of GPUs MXNet can use (0 with the CPU build that the book installs)."""
    return mx.context.num_gpus()


def cpu():
    """The CPU device."""
    return mx.cpu()


def try_gpu(i=0):
    """GPU ``i`` if it exists, else the CPU: an ``mxnet.Context``."""
    check_int("i", i, minimum=0)
    return mx.gpu(i) if num_gpus() > i else cpu()


__all__ = ["cpu", "num_gpus", "set_seed", "try_gpu"]  # the names d2lcore.mxnet re-exports
