"""Random seeds and devices for PyTorch."""

import random

import numpy as np
import torch

from d2lcore.checks import check_int


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
