"""Attention scoring functions in TensorFlow (Attention Scoring
Functions): masked softmax, additive and scaled
dot-product attention."""

import math

import keras
import tensorflow as tf

from .layers import Layer
from .tensors import checked


@checked
def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X (batch, queries, keys) that ignores the keys beyond
    each valid length. valid_lens: None, (batch,) or (batch, queries), whole numbers >= 0.
    A masked key gets weight 0 and gradient 0, whatever its score holds (NaN, inf); a length
    of 0 gives a row of zeros; a length above the number of keys keeps all keys."""
    if valid_lens is None:
        return tf.nn.softmax(X, axis=-1)
    lens = tf.reshape(valid_lens, (-1, 1)) if valid_lens.shape.rank == 1 else valid_lens
    # mask[b, i, j] is True for the keys j that query i of example b may attend to
    keys = tf.range(tf.shape(X)[-1], dtype=X.dtype)
    mask = keys < tf.cast(lens, X.dtype)[..., None]  # (batch, queries or 1, keys)
    # A masked score becomes the lowest float, whose exp() is 0, whatever it held (NaN,
    # inf); a row with no valid key (uniform after the softmax) becomes zeros
    weights = tf.nn.softmax(tf.where(mask, X, X.dtype.min), axis=-1)
    return weights * tf.cast(mask, X.dtype)


@checked
class AdditiveAttention(Layer):
    """a(q, k) = w_v^T tanh(W_q q + W_k k): queries and keys may have different sizes.
    Bahdanau et al., 2015. Input sizes are inferred on the first call.

    queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v), valid_lens
    as in masked_softmax -> (batch, queries, v)."""

    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_q = keras.layers.Dense(num_hiddens, use_bias=False)
        self.W_k = keras.layers.Dense(num_hiddens, use_bias=False)
        self.w_v = keras.layers.Dense(1, use_bias=False)
        self.dropout = keras.layers.Dropout(dropout)
        self.attention_weights = None

    def call(self, queries, keys, values, valid_lens=None):
        queries, keys = self.W_q(queries), self.W_k(keys)  # (batch, *, num_hiddens)
        # Every query meets every key by broadcasting:
        # (batch, queries, 1, hiddens) + (batch, 1, keys, hiddens)
        features = tf.tanh(queries[:, :, None, :] + keys[:, None, :, :])
        scores = tf.squeeze(self.w_v(features), axis=-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # (batch, queries, keys) x (batch, keys, v) -> (batch, queries, v)
        weights = self.dropout(self.attention_weights)
        return tf.matmul(weights, values)


@checked
class DotProductAttention(Layer):
    """a(q, k) = q^T k / sqrt(d): scores that keep unit variance whatever the size d.
    Vaswani et al., 2017.

    queries (batch, queries, d), keys (batch, keys, d), values (batch, keys, v), valid_lens
    as in masked_softmax -> (batch, queries, v)."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = keras.layers.Dropout(dropout)
        self.attention_weights = None

    def call(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # (Q / sqrt(d)) K^T: the division on the queries, smaller than the scores
        scores = tf.matmul(queries / math.sqrt(d), keys, transpose_b=True)
        self.attention_weights = masked_softmax(scores, valid_lens)
        weights = self.dropout(self.attention_weights)
        return tf.matmul(weights, values)


__all__ = [
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
]  # the names d2lcore.tensorflow re-exports
