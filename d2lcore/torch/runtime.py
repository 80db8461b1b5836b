"""Random seeds, devices and CPU threads for PyTorch."""

import os
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


def _choose_cpu_threads():
    """Give PyTorch one intra-op CPU thread, unless the reader chose (``OMP_NUM_THREADS``, or
    ``D2L_NUM_THREADS`` for d2lcore alone).

    The book's models are small: on a 2-core CPU one thread trained them as fast as two, and
    two threads spin-wait when another program keeps a core busy (a training run took 19 times
    as long). On a large machine, set ``D2L_NUM_THREADS`` (or call ``torch.set_num_threads``
    after importing d2lcore); on a GPU it makes no difference."""
    if "OMP_NUM_THREADS" in os.environ and "D2L_NUM_THREADS" not in os.environ:
        return
    value = os.environ.get("D2L_NUM_THREADS", "1")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(
            f"D2L_NUM_THREADS must be a whole number of threads >= 1; got {value!r}. "
            "Unset it for d2lcore's default of 1."
        )
    torch.set_num_threads(int(value))


_choose_cpu_threads()
