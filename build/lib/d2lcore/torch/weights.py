"""A layer's weights as NumPy arrays under canonical names, in PyTorch.

Canonical names are the attribute path from the layer, joined by ``.``, then the
parameter's name, in PyTorch's conventions and layouts: a dense layer has ``weight`` (out,
in) and ``bias`` (out,), an embedding ``weight`` (vocab, dim), a layer norm ``weight``
(gamma) and ``bias`` (beta); layers held in a list or a Sequential are named by their
index (``"blks.0.attention.W_q.weight"``). Buffers (state that is not learned, such as a
positional-encoding table) are not weights. A layer held twice appears under both paths,
as in ``state_dict()``. The names and layouts are the same in every framework's
``export_weights``, so weights exported by one framework load into another.

Extending to more layer types
-----------------------------
In PyTorch a layer's own parameters already carry their canonical names, so no layer type
needs a converter. Other frameworks store some layers differently (a Keras ``Dense`` keeps
``kernel`` = ``weight``ᵀ); their ``weights`` modules offer the same function to teach them
a layer type, and it exists here too so that code can register a converter in every
framework alike::

    register_converter(layer_type, export_fn, load_fn)

``export_fn(layer)`` returns ``{local name: NumPy array}`` in PyTorch's layout (the names
relative to the layer, e.g. ``"weight_ih_l0"``); ``load_fn(layer, arrays)`` receives the
same names with arrays of the same shapes (``load_weights`` has checked them) and stores
them in the layer. A registered layer is a leaf: its sublayers are not visited. The most
specific registered class in the layer's MRO wins.
"""

import numpy as np
import torch
from torch import nn
from torch.nn.parameter import is_lazy

from d2lcore.checks import check_weights_fit
from d2lcore.convert import to_numpy

_CONVERTERS = {}


def register_converter(layer_type, export_fn, load_fn):
    """Name the weights of ``layer_type`` layers with
    ``export_fn(layer) -> {name: array}`` and load them with
    ``load_fn(layer, {name: array})`` (see the module docstring)."""
    if not (isinstance(layer_type, type) and issubclass(layer_type, nn.Module)):
        raise TypeError(f"layer_type must be a subclass of nn.Module; got {layer_type!r}")
    _CONVERTERS[layer_type] = (export_fn, load_fn)


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


def _converter(layer):
    for cls in type(layer).__mro__:
        if cls in _CONVERTERS:
            return _CONVERTERS[cls]
    return _own_export, _own_load


def _check_built(layer, path, recurse):
    if any(is_lazy(p) for p in layer.parameters(recurse=recurse)):
        where = f"the sublayer {path!r}" if path else "the layer"
        raise ValueError(
            f"{where} ({type(layer).__name__}) has no weights yet: its input sizes are "
            "inferred on the first call. Call the layer once on an input first."
        )


def _units(net, path="", parents=()):
    """(prefix, layer, (export_fn, load_fn)) for every layer, in the order of state_dict:
    a layer's own parameters first, then its sublayers. A layer held twice is visited
    twice, as state_dict does."""
    if any(layer is net for layer in parents):
        raise ValueError(
            f"the sublayer {path!r} contains itself: cannot name its weights"
        )
    registered = any(cls in _CONVERTERS for cls in type(net).__mro__)
    _check_built(net, path, recurse=registered)
    yield (f"{path}." if path else ""), net, _converter(net)
    if not registered:
        for name, child in net._modules.items():
            if child is not None:
                yield from _units(
                    child, f"{path}.{name}" if path else name, (*parents, net)
                )


def _collect(net):
    """({canonical name: float32 array},
    [(layer, load_fn, {canonical name: local name}) for each layer])."""
    weights, loaders = {}, []
    for prefix, layer, (export_fn, load_fn) in _units(net):
        names = {}
        for local, array in export_fn(layer).items():
            weights[prefix + local] = np.asarray(array, dtype=np.float32)
            names[prefix + local] = local
        loaders.append((layer, load_fn, names))
    return weights, loaders


def export_weights(net):
    """``net``'s parameters as ``{canonical name: float32 NumPy array}``, e.g.
    ``{"W_q.weight": (num_hiddens, q), ...}`` for a MultiHeadAttention; dense weights are
    (out, in). The layer must have been called once if it infers its input sizes."""
    return _collect(net)[0]


def load_weights(net, weights):
    """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors, e.g.
    from export_weights in another framework) into ``net``'s parameters, in place.

    Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them
    all, before anything is changed. ``net`` must have been called once on an input if it
    infers its input sizes."""
    expected, loaders = _collect(net)
    given = {str(name): to_numpy(array) for name, array in weights.items()}
    check_weights_fit(expected, given)
    for layer, load_fn, names in loaders:
        if names:
            arrays = {
                local: np.asarray(given[name], dtype=np.float32)
                for name, local in names.items()
            }
            load_fn(layer, arrays)
