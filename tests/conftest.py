"""Shared fixtures: the three framework modules of d2lcore and a way to make their tensors."""

import importlib

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF

importlib.import_module(
    "d2lcore.mxnet"
)  # applies MXNet's NumPy shim before any other import of mxnet


def make_tensor(framework, array):
    """A tensor of ``framework`` holding the NumPy ``array`` (dtype kept)."""
    array = np.asarray(array)
    if framework == "mxnet":
        from mxnet import np as mnp

        return mnp.array(array, dtype=array.dtype)
    if framework == "pytorch":
        import torch

        return torch.tensor(array)
    import tensorflow as tf

    return tf.constant(array)


@pytest.fixture(params=FRAMEWORKS)
def framework(request):
    """Each framework's name in turn."""
    return request.param


@pytest.fixture
def d2l(framework):
    """The d2lcore module of the framework under test."""
    return importlib.import_module(MODULE_OF[framework])


@pytest.fixture
def tensor(framework):
    """``tensor(array)`` makes a tensor of the framework under test."""
    return lambda array: make_tensor(framework, array)
