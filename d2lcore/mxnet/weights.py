"""A layer's weights as NumPy arrays under canonical names, in MXNet: the hooks of
:mod:`d2lcore.weights`, which holds the naming, the walk, the converter registry and the
errors for every framework.

Gluon keeps a block's sublayers in ``_children`` and its own parameters in
``_reg_params``, both keyed by attribute name; ``Dense`` stores ``weight`` as (out, in)
already, so only ``LayerNorm`` (``gamma``, ``beta``) needs a converter. Non-differentiable
state (e.g. running statistics) is not a weight."""

from mxnet import np
from mxnet.gluon import nn

from d2lcore.weights import NOT_BUILT, WeightsIO


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


def _parts(layer):
    return (_own_export, _own_load), list(layer._children.items())


def _unbuilt(layer, whole):
    params = layer.collect_params().values() if whole else layer._reg_params.values()
    for p in params:
        if p._data is not None:
            continue
        if p._deferred_init:
            return NOT_BUILT
        return (
            "is not initialised: call net.initialize(), then the layer once on an input."
        )
    return None


WEIGHTS = WeightsIO(nn.Block, _parts, _unbuilt)
"""MXNet's export and load (see :class:`d2lcore.weights.WeightsIO`)."""


def register_converter(layer_type, export_fn, load_fn):
    """Name the weights of ``layer_type`` layers with ``export_fn(layer) -> {name: array}``
    and load them with ``load_fn(layer, {name: array})`` (see :mod:`d2lcore.weights`)."""
    WEIGHTS.register_converter(layer_type, export_fn, load_fn)


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


def export_weights(net):
    """``net``'s parameters as ``{canonical name: float32 NumPy array}``, e.g.
    ``{"W_q.weight": (num_hiddens, q), ...}`` for a MultiHeadAttention; dense weights are
    (out, in). The layer must have been initialised and called once (deferred shapes)."""
    return WEIGHTS.export_weights(net)


def load_weights(net, weights):
    """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors, e.g.
    from export_weights in another framework) into ``net``'s parameters, in place.

    Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them
    all, before anything is changed. ``net`` must have been initialised and called once on
    an input (MXNet infers input sizes on the first call)."""
    WEIGHTS.load_weights(net, weights)


__all__ = ["export_weights", "load_weights"]  # the names d2lcore.mxnet re-exports
