"""Shared fixtures: the three framework modules of d2lcore and a way to make their tensors."""

import importlib

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.frameworks import REGISTRY

# MXNet's NumPy shim must come before any other import of mxnet
importlib.import_module("d2lcore.mxnet")


def make_tensor(framework, array):
    """A tensor of ``framework`` holding the NumPy ``array`` (dtype kept), made by the function that the
    framework's record names (d2lcore.frameworks)."""
    array = np.asarray(array)
    module, _, function = REGISTRY[framework].tensor.rpartition(".")
    make = getattr(importlib.import_module(module), function)
    return make(array, dtype=array.dtype) if framework == "mxnet" else make(array)


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
