"""What the contracts (d2lcore.contracts.engine) need to know of MXNet: its arrays and a few of its layers' sizes."""

import inspect
import sys

import mxnet as mx
import numpy as onp
from mxnet import np
from mxnet.gluon import nn

from d2lcore.contracts.engine import attach

TENSOR = "an mxnet.np.ndarray"


def is_tensor(x):
    return isinstance(x, np.ndarray)


def kind(x):
    return onp.dtype(x.dtype).kind


def dtype_name(x):
    return str(onp.dtype(x.dtype))


def values(x):
    """x's values on the host, as NumPy: waits only for the operations that write x (none for a batch of data)."""
    return x.asnumpy()


def symbolic(x):
    """Whether x is a symbol of a graph being built (a hybridized parent's): its checked call checked the arrays."""
    return isinstance(x, mx.sym.Symbol)


def rows(embedding):
    """The number of token indices that an nn.Embedding embeds (its weight: (input_dim, output_dim))."""
    return embedding.weight.shape[0]


def width(layer):
    """The width of the outputs of an nn.Dense (its units), or of an nn.LayerNorm (None before its first call)."""
    if isinstance(layer, nn.LayerNorm):
        size = layer.gamma.shape[0]  # -1 or 0 until the first call gives the width
        return size if size > 0 else None
    return layer.weight.shape[0]


def gru_size(rnn):
    """(num_layers, num_hiddens) of a Gluon GRU."""
    return rnn._num_layers, rnn._hidden_size


def call_signature(cls):
    """The signature of what calling a block of the class ``cls`` runs: its ``forward`` if the class defines one
    (not Gluon's Block's or HybridBlock's), else its ``hybrid_forward`` without the parameter ``F``."""
    if cls.forward not in (nn.Block.forward, nn.HybridBlock.forward):
        return inspect.signature(cls.forward)
    signature = inspect.signature(cls.hybrid_forward)
    self, _, *rest = signature.parameters.values()  # (self, F, ...)
    return signature.replace(parameters=[self, *rest])


def checked(obj):
    """``@d2l.checked``: attach ``obj``'s contract with MXNet's hooks (engine.attach)."""
    return attach(obj, sys.modules[__name__])
