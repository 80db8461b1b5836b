"""What the contracts (d2lcore.contracts.engine) need to know of PyTorch: its tensors and a few of its layers' sizes."""

import inspect
import sys

import torch
from torch import nn

from d2lcore.contracts.engine import attach

TENSOR = "a torch.Tensor"


def is_tensor(x):
    return torch.is_tensor(x)


def kind(x):
    if x.dtype == torch.bool:
        return "b"
    if x.dtype.is_floating_point:
        return "f"
    if x.dtype.is_complex:
        return "c"
    return "u" if x.dtype == torch.uint8 else "i"


def dtype_name(x):
    return str(x.dtype)


def values(x):
    """x's values on the host, as NumPy (one wait for the device)."""
    return x.detach().cpu().numpy()


def rows(embedding):
    """The number of token indices that an nn.Embedding embeds."""
    return embedding.num_embeddings


def width(layer):
    """The width of the outputs of an nn.Linear (a LazyLinear's too) or an nn.LayerNorm."""
    if isinstance(layer, nn.LayerNorm):
        return layer.normalized_shape[-1]
    return layer.out_features


def gru_size(rnn):
    """(num_layers, num_hiddens) of an nn.GRU."""
    return rnn.num_layers, rnn.hidden_size


def call_signature(cls):
    """The signature of what calling a layer of the class ``cls`` runs: its forward."""
    return inspect.signature(cls.forward)


def checked(obj):
    """``@d2l.checked``: attach ``obj``'s contract with PyTorch's hooks (engine.attach)."""
    return attach(obj, sys.modules[__name__])
