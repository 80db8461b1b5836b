"""What the Keras layers of d2lcore share (TensorFlow, Keras 3): the base class :class:`Layer`,
whose sublayers create their weights on their first call, a size helper for traced graphs,
and every use of Keras' private attributes in d2lcore (so that a new Keras version needs
changes here only)."""

import keras
import tensorflow as tf


def allow_python_arguments(layer):
    """Let ``layer``'s call take None, Python numbers, lists or tuples besides tensors
    (valid_lens=None, an offset, a decoder state), which Keras 3 refuses by default."""
    layer._allow_non_tensor_positional_args = True


class Layer(keras.layers.Layer):
    """A Keras layer built from sublayers that create their weights on their first call (as
    PyTorch's lazy modules and Gluon's deferred initialisation do), and whose call may take
    Python values besides tensors (see :func:`allow_python_arguments`)."""

    def __init__(self):
        super().__init__()
        allow_python_arguments(self)

    def build(self, input_shape):
        # Nothing to create: the sublayers build themselves on their first call. Without
        # this method, Keras would trace call() on symbolic inputs to build the layer (and
        # warn).
        pass


class Model(Layer, keras.Model):
    """A :class:`Layer` that is also a ``keras.Model`` (the top of a network)."""


def size(X, axis):
    """X's size along axis: a number when known, a scalar tensor inside tf.function."""
    return X.shape[axis] if X.shape[axis] is not None else tf.shape(X)[axis]


def trainable_variables_of(layer):
    """The trainable variables that ``layer`` created itself (not its sublayers')."""
    return list(layer._trainable_variables)


def tracked_sublayers(layer):
    """The sublayers that Keras tracks for ``layer``, whatever attribute holds them."""
    return list(layer._layers)


def all_layers(layer):
    """``layer`` and all its sublayers, recursively, ``layer`` first."""
    return list(layer._flatten_layers())
