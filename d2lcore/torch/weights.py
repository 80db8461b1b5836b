"""A layer's weights as NumPy arrays under canonical names, in PyTorch: the hooks of
:mod:`d2lcore.weights`, which holds the naming, the walk, the converter registry and the
errors for every framework.

A module's own parameters are ``_parameters`` and its sublayers ``_modules``, both keyed by
attribute name, in PyTorch's layouts already: no layer type needs a converter here.
``register_converter`` exists all the same, so that code can teach a layer type to every
framework alike (see :mod:`d2lcore.weights`)."""

import torch
from torch import nn
from torch.nn.parameter import is_lazy

from d2lcore.weights import NOT_BUILT, WeightsIO


def _own_export(layer):
    """The layer's own parameters (not its sublayers'), under their attribute names."""
    return {
        name: p.detach().cpu().float().numpy()
        for name, p in layer._parameters.items()
        if p is not None
    }


def _own_load(layer, arrays):
    with torch.no_grad():
        for name, array in arrays.items():
            layer._parameters[name].copy_(torch.tensor(array))


def _parts(layer):
    sublayers = [(name, sub) for name, sub in layer._modules.items() if sub is not None]
    return (_own_export, _own_load), sublayers


def _unbuilt(layer, whole):
    if any(is_lazy(p) for p in layer.parameters(recurse=whole)):
        return NOT_BUILT
    return None


WEIGHTS = WeightsIO(nn.Module, _parts, _unbuilt)
"""PyTorch's export and load (see :class:`d2lcore.weights.WeightsIO`)."""


def register_converter(layer_type, export_fn, load_fn):
    """Name the weights of ``layer_type`` layers with ``export_fn(layer) -> {name: array}``
    and load them with ``load_fn(layer, {name: array})`` (see :mod:`d2lcore.weights`)."""
    WEIGHTS.register_converter(layer_type, export_fn, load_fn)


def export_weights(net):
    """``net``'s parameters as ``{canonical name: float32 NumPy array}``, e.g.
    ``{"W_q.weight": (num_hiddens, q), ...}`` for a MultiHeadAttention; dense weights are
    (out, in). The layer must have been called once if it infers its input sizes."""
    return WEIGHTS.export_weights(net)


def load_weights(net, weights):
    """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors, e.g.
    from export_weights in another framework) into ``net``'s parameters, in place.

    Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them
    all, before anything is changed. ``net`` must have been called once on an input if it
    infers its input sizes."""
    WEIGHTS.load_weights(net, weights)


__all__ = ["export_weights", "load_weights"]  # the names d2lcore.torch re-exports
