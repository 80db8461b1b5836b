"""A layer's weights as NumPy arrays under canonical names, in MXNet.

Canonical names are the attribute path from the layer, joined by ``.``, then the
parameter's name, in PyTorch's conventions and layouts: a dense layer has ``weight`` (out,
in) and ``bias`` (out,), an embedding ``weight`` (vocab, dim), a layer norm ``weight``
(gamma) and ``bias`` (beta); layers held in a Sequential are named by their index
(``"blks.0.attention.W_q.weight"``). Non-differentiable state (e.g. running statistics) is
not a weight. A layer held twice appears under both paths, as in PyTorch's
``state_dict()``. The names and layouts are the same in every framework's
``export_weights``, so weights exported by one framework load into another.

Gluon keeps a block's sublayers in ``_children`` and its own parameters in
``_reg_params``, both keyed by attribute name; ``Dense`` stores ``weight`` as (out, in)
already, so only ``LayerNorm`` (``gamma``, ``beta``) needs a converter.

Extending to more layer types
-----------------------------
Teach ``export_weights`` and ``load_weights`` a layer type whose parameters are stored
differently from PyTorch (e.g. a multi-layer GRU) with::

    register_converter(layer_type, export_fn, load_fn)

``export_fn(layer)`` returns ``{local name: NumPy array}`` in PyTorch's layout (the names
relative to the layer, e.g. ``"weight_ih_l0"``); ``load_fn(layer, arrays)`` receives the
same names with arrays of the same shapes (``load_weights`` has checked them) and stores
them in the layer. A registered layer is a leaf: its sublayers are not visited. The most
specific registered class in the layer's MRO wins.
"""

import numpy as onp
from mxnet import np
from mxnet.gluon import nn

from d2lcore.checks import check_weights_fit
from d2lcore.convert import to_numpy

_CONVERTERS = {}


def register_converter(layer_type, export_fn, load_fn):
    """Name the weights of ``layer_type`` layers with
    ``export_fn(layer) -> {name: array}`` and load them with
    ``load_fn(layer, {name: array})`` (see the module docstring)."""
    if not (isinstance(layer_type, type) and issubclass(layer_type, nn.Block)):
        raise TypeError(f"layer_type must be a subclass of nn.Block; got {layer_type!r}")
    _CONVERTERS[layer_type] = (export_fn, load_fn)


def _get(param):
    return param.list_data()[0].asnumpy()


def _set(param, array):
    param.set_data(np.array(array, dtype=param.dtype))


def _own_export(layer):
    """The layer's own differentiable parameters (not its sublayers'), by attribute
    name."""
    return {
        name: _get(p)
        for name, p in layer._reg_params.items()
        if getattr(p, "_differentiable", True)
    }


def _own_load(layer, arrays):
    for name, array in arrays.items():
        _set(layer._reg_params[name], array)


def _layer_norm_export(layer):
    arrays = {}
    if layer._scale:
        arrays["weight"] = _get(layer.gamma)
    if layer._center:
        arrays["bias"] = _get(layer.beta)
    return arrays


def _layer_norm_load(layer, arrays):
    for name, param in (("weight", layer.gamma), ("bias", layer.beta)):
        if name in arrays:
            _set(param, arrays[name])


register_converter(nn.LayerNorm, _layer_norm_export, _layer_norm_load)


def _converter(layer):
    for cls in type(layer).__mro__:
        if cls in _CONVERTERS:
            return _CONVERTERS[cls]
    return _own_export, _own_load


def _check_built(layer, path, registered):
    params = layer.collect_params().values() if registered else layer._reg_params.values()
    for p in params:
        if p._data is not None:
            continue
        where = f"the sublayer {path!r}" if path else "the layer"
        if p._deferred_init:
            raise ValueError(
                f"{where} ({type(layer).__name__}) has no weights yet: its input sizes "
                "are inferred on the first call. Call the layer once on an input first."
            )
        raise ValueError(
            f"{where} ({type(layer).__name__}) is not initialised: call "
            "net.initialize(), then the layer once on an input."
        )


def _units(net, path="", parents=()):
    """(prefix, layer, (export_fn, load_fn)) for every layer: a layer's own parameters
    first, then its sublayers, as in PyTorch's state_dict."""
    if any(layer is net for layer in parents):
        raise ValueError(
            f"the sublayer {path!r} contains itself: cannot name its weights"
        )
    registered = any(cls in _CONVERTERS for cls in type(net).__mro__)
    _check_built(net, path, registered)
    yield (f"{path}." if path else ""), net, _converter(net)
    if not registered:
        for name, child in net._children.items():
            yield from _units(child, f"{path}.{name}" if path else name, (*parents, net))


def _collect(net):
    """({canonical name: float32 array},
    [(layer, load_fn, {canonical name: local name}) for each layer])."""
    weights, loaders = {}, []
    for prefix, layer, (export_fn, load_fn) in _units(net):
        names = {}
        for local, array in export_fn(layer).items():
            weights[prefix + local] = onp.asarray(array, dtype=onp.float32)
            names[prefix + local] = local
        loaders.append((layer, load_fn, names))
    return weights, loaders


def export_weights(net):
    """``net``'s parameters as ``{canonical name: float32 NumPy array}``, e.g.
    ``{"W_q.weight": (num_hiddens, q), ...}`` for a MultiHeadAttention; dense weights are
    (out, in). The layer must have been initialised and called once (deferred shapes)."""
    return _collect(net)[0]


def load_weights(net, weights):
    """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors, e.g.
    from export_weights in another framework) into ``net``'s parameters, in place.

    Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them
    all, before anything is changed. ``net`` must have been initialised and called once on
    an input (MXNet infers input sizes on the first call)."""
    expected, loaders = _collect(net)
    given = {str(name): to_numpy(array) for name, array in weights.items()}
    check_weights_fit(expected, given)
    for layer, load_fn, names in loaders:
        if names:
            arrays = {
                local: onp.asarray(given[name], dtype=onp.float32)
                for name, local in names.items()
            }
            load_fn(layer, arrays)
