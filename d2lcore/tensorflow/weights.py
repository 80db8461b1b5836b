"""A layer's weights as NumPy arrays under canonical names, in TensorFlow (Keras 3): the
hooks of :mod:`d2lcore.weights`, which holds the naming, the walk, the converter registry
and the errors for every framework.

A Keras layer is walked through its attributes, in the order they were first set (the
order of ``vars(layer)``), skipping Keras's own bookkeeping: a sublayer, a list, tuple or
dict of sublayers, or a trainable variable contributes under its attribute name. A
trainable variable that the layer created (``add_weight``) but holds in no attribute comes
last, under its own name. A sublayer that holds weights but that no attribute reaches
raises ValueError, since it could not be named. Non-trainable variables (the counterpart
of PyTorch's buffers) are not weights. Keras ``Dense`` (``kernel`` = ``weight``ᵀ),
``Embedding`` (``embeddings``) and ``LayerNormalization`` (``gamma``, ``beta``) are leaf
converters."""

import functools

import keras
import numpy

from d2lcore.weights import NOT_BUILT, WeightsIO

from .layers import tracked_sublayers, trainable_variables_of


def _dense_export(layer):
    arrays = {"weight": layer.kernel.numpy().T}  # kernel: (in, out)
    if layer.use_bias:
        arrays["bias"] = layer.bias.numpy()
    return arrays


def _dense_load(layer, arrays):
    layer.kernel.assign(arrays["weight"].T)
    if "bias" in arrays:
        layer.bias.assign(arrays["bias"])


def _embedding_export(layer):
    return {"weight": layer.embeddings.numpy()}


def _embedding_load(layer, arrays):
    layer.embeddings.assign(arrays["weight"])


def _layer_norm_export(layer):
    arrays = {}
    if layer.scale:
        arrays["weight"] = layer.gamma.numpy()
    if layer.center:
        arrays["bias"] = layer.beta.numpy()
    return arrays


def _layer_norm_load(layer, arrays):
    if "weight" in arrays:
        layer.gamma.assign(arrays["weight"])
    if "bias" in arrays:
        layer.beta.assign(arrays["bias"])


@functools.cache
def _keras_attributes():
    """The attributes that Keras itself sets on every layer and model (not sublayers)."""
    return frozenset(vars(keras.layers.Layer())) | frozenset(vars(keras.Model()))


def _trainable(layer):
    return {id(v) for v in trainable_variables_of(layer)}


def _contents(layer):
    """(own variables [(name, variable)], sublayers [(name, layer)]) of a layer that has
    no converter, in attribute order."""
    if isinstance(layer, keras.Sequential):
        return [], [(str(i), sub) for i, sub in enumerate(layer.layers)]
    trainable = _trainable(layer)
    variables, sublayers = [], []

    def visit(name, value):
        if isinstance(value, keras.layers.Layer):
            sublayers.append((name, value))
        elif isinstance(value, keras.Variable) and id(value) in trainable:
            variables.append((name, value))

    for name, value in vars(layer).items():
        if name in _keras_attributes() or name.startswith("_self_"):
            continue
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                visit(f"{name}.{i}", item)
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(f"{name}.{key}", item)
        else:
            visit(name, value)
    # variables made by add_weight but kept in no attribute: by their own name
    reached = {id(v) for _, v in variables}
    variables += [
        (v.name, v) for v in trainable_variables_of(layer) if id(v) not in reached
    ]
    # a sublayer that Keras tracks but no attribute reaches cannot be named
    named = {id(sub) for _, sub in sublayers}
    for sub in tracked_sublayers(layer):
        if id(sub) not in named and _holds_weights(sub):
            raise ValueError(
                f"{type(layer).__name__} holds the sublayer {sub.name!r} in no attribute "
                "that export_weights can name: keep it in an attribute, or a list or dict"
            )
    return variables, sublayers


def _holds_weights(layer):
    return bool(trainable_variables_of(layer)) or any(
        map(_holds_weights, tracked_sublayers(layer))
    )


def _variables_export(variables):
    return lambda layer: {name: v.numpy() for name, v in variables}


def _variables_load(variables):
    def load(layer, arrays):
        for name, v in variables:
            v.assign(arrays[name])

    return load


def _parts(layer):
    variables, sublayers = _contents(layer)
    return (_variables_export(variables), _variables_load(variables)), sublayers


def _unbuilt(layer, whole):
    return None if layer.built else NOT_BUILT


WEIGHTS = WeightsIO(keras.layers.Layer, _parts, _unbuilt)
"""TensorFlow's export and load (see :class:`d2lcore.weights.WeightsIO`)."""


# Keras keeps a GRU layer's input weights as one kernel (inputs, 3h) with the gates in the
# order (update z, reset r, new n), the recurrent ones as recurrent_kernel (h, 3h), and
# both biases in bias (2, 3h). The canonical (PyTorch) layout is weight_ih (3h, inputs)
# with the gates in the order (r, z, n), weight_hh (3h, h), bias_ih (3h,), bias_hh (3h,).
def _to_rzn(kernel_zrn):
    """Columns (z, r, n) of a Keras kernel -> rows (r, z, n) of a canonical weight."""
    z, r, n = numpy.split(kernel_zrn, 3, axis=-1)
    return numpy.concatenate((r, z, n), axis=-1).T


def _to_zrn(weight_rzn):
    """Rows (r, z, n) of a canonical weight -> columns (z, r, n) of a Keras kernel."""
    r, z, n = numpy.split(weight_rzn, 3, axis=0)
    return numpy.concatenate((z, r, n), axis=0).T


def gru_export(gru):
    """The weights of d2lcore's GRU (its Keras layers ``gru.grus``) in PyTorch's layout:
    weight_ih_l{k} (3h, inputs), weight_hh_l{k} (3h, h), bias_ih_l{k} (3h,), bias_hh_l{k}
    (3h,) for every layer k, gates in the order (r, z, n)."""
    arrays = {}
    for k, layer in enumerate(gru.grus):
        cell = layer.cell
        arrays[f"weight_ih_l{k}"] = _to_rzn(cell.kernel.numpy())
        arrays[f"weight_hh_l{k}"] = _to_rzn(cell.recurrent_kernel.numpy())
        bias = cell.bias.numpy()  # (2, 3h): input bias, recurrent bias
        arrays[f"bias_ih_l{k}"] = _to_rzn(bias[0])
        arrays[f"bias_hh_l{k}"] = _to_rzn(bias[1])
    return arrays


def gru_load(gru, arrays):
    """Set the weights of d2lcore's GRU from ``arrays`` laid out as gru_export gives them."""
    for k, layer in enumerate(gru.grus):
        cell = layer.cell
        cell.kernel.assign(_to_zrn(arrays[f"weight_ih_l{k}"]))
        cell.recurrent_kernel.assign(_to_zrn(arrays[f"weight_hh_l{k}"]))
        bias_ih, bias_hh = arrays[f"bias_ih_l{k}"], arrays[f"bias_hh_l{k}"]
        cell.bias.assign(numpy.stack((_to_zrn(bias_ih), _to_zrn(bias_hh))))


def register_converter(layer_type, export_fn, load_fn):
    """Name the weights of ``layer_type`` layers with ``export_fn(layer) -> {name: array}``
    and load them with ``load_fn(layer, {name: array})`` (see :mod:`d2lcore.weights`)."""
    WEIGHTS.register_converter(layer_type, export_fn, load_fn)


register_converter(keras.layers.Dense, _dense_export, _dense_load)
register_converter(keras.layers.Embedding, _embedding_export, _embedding_load)
register_converter(keras.layers.LayerNormalization, _layer_norm_export, _layer_norm_load)


def export_weights(net):
    """``net``'s trainable variables as ``{canonical name: float32 NumPy array}``, e.g.
    ``{"W_q.weight": (num_hiddens, q), ...}`` for a MultiHeadAttention; dense weights are
    (out, in), the transpose of Keras's kernel. The layer must have been called once."""
    return WEIGHTS.export_weights(net)


def load_weights(net, weights):
    """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors, e.g.
    from export_weights in another framework) into ``net``'s variables, in place.

    Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them
    all, before anything is changed. ``net`` must have been called once on an input (Keras
    creates its variables on the first call)."""
    WEIGHTS.load_weights(net, weights)


__all__ = ["export_weights", "load_weights"]  # the names d2lcore.tensorflow re-exports
