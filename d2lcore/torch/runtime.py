"""Random seeds, devices, CPU threads and large tensors' memory for PyTorch."""

import random

import numpy as np
import torch

from d2lcore.contracts.engine import check_int
from d2lcore.threads import cpu_threads


def set_seed(seed):
    """Seed Python's, NumPy's and PyTorch's random number generators."""
    check_int("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def num_gpus():
    """The number of GPUs PyTorch can use."""
    return torch.cuda.device_count()


def cpu():
    """The CPU device."""
    return torch.device("cpu")


def try_gpu(i=0):
    """GPU ``i`` if it exists, else the CPU: a ``torch.device``."""
    check_int("i", i, minimum=0)
    return torch.device(f"cuda:{i}") if num_gpus() > i else cpu()


# One intra-op thread unless the reader chose (see d2lcore.threads): small models, no
# spin-waiting when another program is busy. torch.set_num_threads(n) afterwards overrides it.
if (_threads := cpu_threads()) is not None:
    torch.set_num_threads(_threads)

__all__ = ["cpu", "num_gpus", "set_seed", "try_gpu"]  # the names d2lcore.torch re-exports
