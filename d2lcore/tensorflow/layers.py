"""What d2lcore's Keras layers share (TensorFlow, Keras 3), and every use of Keras' private
attributes in d2lcore (so that a new Keras version needs changes here only): the Keras
settings of the taught layers, which ``@d2l.checked`` applies (:func:`lazy_layer`), and
the bases of the encoder–decoder classes that the toolkit page shows."""

import functools

import keras


def allow_python_arguments(layer):
    """Let ``layer``'s call take Python numbers, lists or tuples besides tensors and None
    (an offset, a decoder state), which Keras 3 refuses by default."""
    layer._allow_non_tensor_positional_args = True


def _build_nothing(self, input_shape):
    # Nothing to create: the sublayers build themselves on their first call. Without this
    # method, Keras would trace call() on symbolic inputs to build the layer first.
    pass


def lazy_layer(cls):
    """The Keras layer class ``cls``, made a layer whose sublayers create their weights on
    their first call (as PyTorch's lazy modules and Gluon's deferred initialisation do):
    unless ``cls`` defines ``build``, its build creates nothing, instead of tracing call()
    on symbolic inputs; and whose call may take Python values besides tensors (see
    :func:`allow_python_arguments`). ``@d2l.checked`` applies it to the taught layers.
    Returns ``cls``; another class is returned as is."""
    if not (isinstance(cls, type) and issubclass(cls, keras.layers.Layer)):
        return cls
    if getattr(cls.build, "_is_default", False):  # Keras' own build (utils.default)
        cls.build = _build_nothing
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        allow_python_arguments(self)

    cls.__init__ = __init__
    return cls


@lazy_layer
class Layer(keras.layers.Layer):
    """A Keras layer made a :func:`lazy_layer`: the base of d2lcore's encoders and decoders."""


@lazy_layer
class Model(keras.Model):
    """A ``keras.Model`` made a :func:`lazy_layer`: the base of d2lcore's EncoderDecoder."""


def trainable_variables_of(layer):
    """The trainable variables that ``layer`` created itself (not its sublayers')."""
    return list(layer._trainable_variables)


def tracked_sublayers(layer):
    """The sublayers that Keras tracks for ``layer``, whatever attribute holds them."""
    return list(layer._layers)


def all_layers(layer):
    """``layer`` and all its sublayers, recursively, ``layer`` first."""
    return list(layer._flatten_layers())
