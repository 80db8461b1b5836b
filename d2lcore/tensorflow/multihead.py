"""Multi-head attention in TensorFlow (Multi-Head Attention): num_heads scaled dot-product attentions
over learned projections, computed in parallel by folding the heads into the batch axis.
Vaswani et al., 2017, "Attention is all you need"."""

import keras
import tensorflow as tf

from .attention import DotProductAttention
from .layers import Layer
from .tensors import checked


@checked
def transpose_qkv(X, num_heads):
    """(batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads).

    Head i of example b (features i * d ... i * d + d - 1 of X[b], d = num_hiddens /
    num_heads) becomes row b * num_heads + i: an example's heads are consecutive."""
    batch, n, d = tf.shape(X)[0], tf.shape(X)[1], X.shape[2] // num_heads
    X = tf.reshape(X, (batch, n, num_heads, d))  # (batch, n, heads, d)
    X = tf.transpose(X, perm=(0, 2, 1, 3))  # (batch, heads, n, d)
    return tf.reshape(X, (-1, n, d))  # (batch * heads, n, d)


@checked
def transpose_output(X, num_heads):
    """(batch * num_heads, n, d) -> (batch, n, num_heads * d): undoes transpose_qkv."""
    n, d = tf.shape(X)[1], X.shape[2]
    X = tf.reshape(X, (-1, num_heads, n, d))  # (batch, heads, n, d)
    X = tf.transpose(X, perm=(0, 2, 1, 3))  # (batch, n, heads, d)
    return tf.reshape(X, (-1, n, num_heads * d))  # (batch, n, num_heads * d)


@checked
class MultiHeadAttention(Layer):
    """Multi-head scaled dot-product attention. W_q, W_k, W_v project queries, keys and
    values to num_hiddens features (num_heads heads of num_hiddens / num_heads each); W_o
    mixes the concatenated heads. Input sizes are inferred on the first call.

    queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v), valid_lens
    None, (batch,) or (batch, queries) -> (batch, queries, num_hiddens)."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_k = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_v = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_o = keras.layers.Dense(num_hiddens, use_bias=bias)

    def call(self, queries, keys, values, valid_lens=None):
        # After the projections and transpose_qkv: (batch * num_heads, n, num_hiddens / h)
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            # Each example's lengths, copied num_heads times in a row like its heads
            valid_lens = tf.repeat(valid_lens, self.num_heads, axis=0)
        output = self.attention(queries, keys, values, valid_lens)
        # output: (batch * num_heads, n_q, d) -> (batch, n_q, num_hiddens)
        return self.W_o(transpose_output(output, self.num_heads))

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, queries, keys)."""
        weights = self.attention.attention_weights  # (batch * num_heads, queries, keys)
        if weights is None:
            return None
        queries, keys = tf.shape(weights)[1], tf.shape(weights)[2]
        return tf.reshape(weights, (-1, self.num_heads, queries, keys))


__all__ = [
    "MultiHeadAttention",
    "transpose_output",
    "transpose_qkv",
]  # the names d2lcore.tensorflow re-exports
