"""A layer's weights as NumPy arrays under canonical names, in TensorFlow (Keras 3).

Canonical names are the attribute path from the layer, joined by ``.``, then the
parameter's name, in PyTorch's conventions and layouts: a dense layer has ``weight`` (out,
in) and ``bias`` (out,), an embedding ``weight`` (vocab, dim), a layer norm ``weight``
(gamma) and ``bias`` (beta); layers held in a list or a ``keras.Sequential`` are named by
their index (``"blks.0.attention.W_q.weight"``). Non-trainable variables (state such as
running statistics, the counterpart of PyTorch's buffers) are not weights. A layer held
twice appears under both paths, as in PyTorch's ``state_dict()``. The names and layouts
are the same in every framework's ``export_weights``, so weights exported by one framework
load into another.

A Keras layer is walked through its attributes, in the order they were first set (the
order of ``vars(layer)``), skipping Keras's own bookkeeping: a sublayer, a list, tuple or
dict of sublayers, or a trainable variable contributes under its attribute name. A
trainable variable that the layer created (``add_weight``) but holds in no attribute comes
last, under its own name. A sublayer that holds weights but that no attribute reaches
raises ValueError, since it could not be named. Keras ``Dense`` (``kernel`` =
``weight``ᵀ), ``Embedding`` (``embeddings``) and ``LayerNormalization`` (``gamma``,
``beta``) are leaf converters.

Extending to more layer types
-----------------------------
Teach ``export_weights`` and ``load_weights`` a layer type whose variables are stored
differently from PyTorch (e.g. a multi-layer GRU) with::

    register_converter(layer_type, export_fn, load_fn)

``export_fn(layer)`` returns ``{local name: NumPy array}`` in PyTorch's layout (the names
relative to the layer, e.g. ``"weight_ih_l0"``); ``load_fn(layer, arrays)`` receives the
same names with arrays of the same shapes (``load_weights`` has checked them) and stores
them in the layer (``variable.assign``). A registered layer is a leaf: its sublayers are
not visited. The most specific registered class in the layer's MRO wins.
"""

import functools

import keras
import numpy as np

from d2lcore.checks import check_weights_fit
from d2lcore.convert import to_numpy

_CONVERTERS = {}


def register_converter(layer_type, export_fn, load_fn):
    """Name the weights of ``layer_type`` layers with
    ``export_fn(layer) -> {name: array}`` and load them with
    ``load_fn(layer, {name: array})`` (see the module docstring)."""
    if not (isinstance(layer_type, type) and issubclass(layer_type, keras.layers.Layer)):
        raise TypeError(
            f"layer_type must be a subclass of keras.layers.Layer; got {layer_type!r}"
        )
    _CONVERTERS[layer_type] = (export_fn, load_fn)


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


register_converter(keras.layers.Dense, _dense_export, _dense_load)
register_converter(keras.layers.Embedding, _embedding_export, _embedding_load)
register_converter(keras.layers.LayerNormalization, _layer_norm_export, _layer_norm_load)


@functools.cache
def _keras_attributes():
    """The attributes that Keras itself sets on every layer and model (not sublayers)."""
    return frozenset(vars(keras.layers.Layer())) | frozenset(vars(keras.Model()))


def _trainable(layer):
    return {id(v) for v in layer._trainable_variables}


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
    variables += [(v.name, v) for v in layer._trainable_variables if id(v) not in reached]
    # a sublayer that Keras tracks but no attribute reaches cannot be named
    named = {id(sub) for _, sub in sublayers}
    for sub in layer._layers:
        if id(sub) not in named and _holds_weights(sub):
            raise ValueError(
                f"{type(layer).__name__} holds the sublayer {sub.name!r} in no attribute "
                "that export_weights can name: keep it in an attribute, or a list or dict"
            )
    return variables, sublayers


def _holds_weights(layer):
    return bool(layer._trainable_variables) or any(map(_holds_weights, layer._layers))


def _variables_export(variables):
    return lambda layer: {name: v.numpy() for name, v in variables}


def _variables_load(variables):
    def load(layer, arrays):
        for name, v in variables:
            v.assign(arrays[name])

    return load


def _check_built(layer, path):
    if not layer.built:
        where = f"the sublayer {path!r}" if path else "the layer"
        raise ValueError(
            f"{where} ({type(layer).__name__}) has no weights yet: its input sizes are "
            "inferred on the first call. Call the layer once on an input first."
        )


def _units(net, path="", parents=()):
    """(prefix, layer, (export_fn, load_fn)) for every layer: a layer's own variables
    first, then its sublayers, as in PyTorch's state_dict."""
    if any(layer is net for layer in parents):
        raise ValueError(
            f"the sublayer {path!r} contains itself: cannot name its weights"
        )
    _check_built(net, path)
    prefix = f"{path}." if path else ""
    for cls in type(net).__mro__:
        if cls in _CONVERTERS:
            yield prefix, net, _CONVERTERS[cls]
            return
    variables, sublayers = _contents(net)
    yield prefix, net, (_variables_export(variables), _variables_load(variables))
    for name, sub in sublayers:
        yield from _units(sub, prefix + name, (*parents, net))


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
    """``net``'s trainable variables as ``{canonical name: float32 NumPy array}``, e.g.
    ``{"W_q.weight": (num_hiddens, q), ...}`` for a MultiHeadAttention; dense weights are
    (out, in), the transpose of Keras's kernel. The layer must have been called once."""
    return _collect(net)[0]


def load_weights(net, weights):
    """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors, e.g.
    from export_weights in another framework) into ``net``'s variables, in place.

    Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them
    all, before anything is changed. ``net`` must have been called once on an input (Keras
    creates its variables on the first call)."""
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
