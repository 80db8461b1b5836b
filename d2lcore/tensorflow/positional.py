"""Sinusoidal positional encoding in TensorFlow (Self-Attention and
Positional Encoding). Vaswani et al., 2017,
"Attention is all you need"."""

import keras
import tensorflow as tf

from d2lcore.positional import sinusoid_table

from .layers import Layer
from .tensors import checked


@checked
class PositionalEncoding(Layer):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout; offset: an int, or a scalar tensor
    (known only when a graph runs). ``P`` is the whole table, (1, max_len, num_hiddens),
    computed once (a constant, not a weight)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = keras.layers.Dropout(dropout)
        self.P = tf.constant(sinusoid_table(max_len, num_hiddens))

    def call(self, X, offset=0):
        P = tf.cast(self.P[:, offset : offset + tf.shape(X)[1], :], X.dtype)
        return self.dropout(X + P)


__all__ = ["PositionalEncoding"]  # the names d2lcore.tensorflow re-exports
