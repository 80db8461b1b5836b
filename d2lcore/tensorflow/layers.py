"""What the Keras layers of d2lcore share (TensorFlow, Keras 3): the base class :class:`Layer`,
whose sublayers create their weights on their first call, a size helper for traced graphs,
Keras's Dropout and LayerNormalization computed in fewer operations (the same functions; the
pages do not teach them), and every use of Keras' private attributes in d2lcore (so that a
new Keras version needs changes here only)."""

import keras
import tensorflow as tf
from keras.src.backend.tensorflow.random import _cast_seed


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


def _dropout_seed(seed_generator):
    """The next seed of a Keras SeedGenerator, as keras.layers.Dropout draws it (an int32
    pair for TensorFlow's stateless random functions)."""
    return _cast_seed(seed_generator.next())


class Dropout(keras.layers.Dropout):
    """keras.layers.Dropout(rate) that multiplies X by its mask: in training, each entry of X
    is kept where a uniform draw in [0, 1) is at least ``rate`` (probability 1 - rate) and
    scaled by 1 / (1 - rate), else set to 0; in inference (or for rate 0), X itself. It
    draws the very numbers Keras's layer draws (the same seeds, the same uniform draws), so
    it gives the same outputs; Keras selects the entries with tf.where, whose gradient is a
    second selection, where this layer multiplies, once forward and once backward: about a
    fifth less time per dropout, forward and backward, on a CPU. X: any shape."""

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate >= 1 or self.noise_shape is not None:
            return super().call(inputs, training=training)
        seed = _dropout_seed(self.seed_generator)
        draws = tf.random.stateless_uniform(tf.shape(inputs), seed, dtype=inputs.dtype)
        keep = tf.cast(draws >= self.rate, inputs.dtype) * (1 / (1 - self.rate))
        return inputs * keep


class LayerNormalization(keras.layers.LayerNormalization):
    """keras.layers.LayerNormalization over the last axis, with a learned scale (gamma) and
    shift (beta) per feature: (X - mean) / sqrt(variance + epsilon) * gamma + beta, the
    mean and (biased) variance taken over the last axis. The same function as Keras's
    layer, up to rounding, in fewer operations: the normalised X is scaled by gamma once,
    and the gradient is the closed form of the layer's derivative (see
    :func:`layer_norm`), not the derivative of each operation in turn. Other axes, or no
    scale or shift, fall back to Keras's computation."""

    def call(self, inputs):
        rank = inputs.shape.rank
        last = rank is not None and self.axis in (-1, rank - 1, [-1], [rank - 1])
        if not (last and self.center and self.scale and not self.rms_scaling):
            return super().call(inputs)
        if inputs.dtype != tf.float32:
            return super().call(inputs)
        return layer_norm(inputs, self.gamma, self.beta, self.epsilon)


def layer_norm(X, gamma, beta, epsilon):
    """(X - mean) / sqrt(variance + epsilon) * gamma + beta over X's last axis (d features;
    gamma, beta: (d,)), with its gradient written out: for x_hat the normalised X and
    G = dL/dY * gamma, dL/dX = (G - mean(G) - x_hat * mean(G * x_hat)) / sqrt(variance +
    epsilon), each mean over the last axis; dL/dgamma and dL/dbeta sum dL/dY * x_hat and
    dL/dY over all other axes."""
    # The variables are read here, so that the custom gradient sees tensors only
    gamma, beta = tf.convert_to_tensor(gamma), tf.convert_to_tensor(beta)

    @tf.custom_gradient
    def normalise(X, gamma, beta):
        mean = tf.reduce_mean(X, axis=-1, keepdims=True)
        centred = X - mean
        variance = tf.reduce_mean(tf.square(centred), axis=-1, keepdims=True)
        inverse = tf.math.rsqrt(variance + epsilon)  # (..., 1)
        X_hat = centred * inverse

        def gradient(dY):
            G = dY * gamma
            dX = inverse * (
                G
                - tf.reduce_mean(G, axis=-1, keepdims=True)
                - X_hat * tf.reduce_mean(G * X_hat, axis=-1, keepdims=True)
            )
            others = list(range(X.shape.rank - 1))  # every axis but the features'
            dgamma = tf.reduce_sum(dY * X_hat, axis=others)
            return dX, dgamma, tf.reduce_sum(dY, axis=others)

        return X_hat * gamma + beta, gradient

    return normalise(X, gamma, beta)
