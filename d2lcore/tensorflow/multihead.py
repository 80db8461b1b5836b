"""Multi-head attention in TensorFlow (section 6): num_heads scaled dot-product attentions
over learned projections, computed in parallel by folding the heads into the batch axis.
Vaswani et al., 2017, "Attention is all you need"."""

import keras
import tensorflow as tf

from d2lcore.checks import (
    check_bool,
    check_built_widths,
    check_dropout,
    check_heads,
    check_int,
    check_shapes,
    valid_lens_spec,
)

from .attention import DotProductAttention
from .checks import check_float, check_valid_lens
from .layers import Layer, size


def transpose_qkv(X, num_heads):
    """(batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads).

    Head i of example b (features i * d ... i * d + d - 1 of X[b], d = num_hiddens /
    num_heads) becomes row b * num_heads + i: an example's heads are consecutive."""
    dims = check_shapes(X=(X, "batch n num_hiddens"))
    check_heads(dims.get("num_hiddens"), num_heads)
    # d given when known, so that the shape stays known inside tf.function
    d = -1 if X.shape[2] is None else X.shape[2] // num_heads
    X = tf.reshape(X, (size(X, 0), size(X, 1), num_heads, d))  # (batch, n, heads, d)
    X = tf.transpose(X, perm=(0, 2, 1, 3))  # (batch, heads, n, d)
    return tf.reshape(X, (-1, size(X, 2), size(X, 3)))  # (batch * heads, n, d)


def transpose_output(X, num_heads):
    """(batch * num_heads, n, d) -> (batch, n, num_heads * d): undoes transpose_qkv."""
    check_int("num_heads", num_heads, minimum=1)
    dims = check_shapes(X=(X, "batch_heads n d"))
    if dims.get("batch_heads", 0) % num_heads:
        raise ValueError(
            f"X's first dimension ({dims['batch_heads']}) must be a multiple of "
            f"num_heads ({num_heads}): it holds batch * num_heads rows; got X of shape "
            f"{tuple(X.shape)}"
        )
    X = tf.reshape(X, (-1, num_heads, size(X, 1), size(X, 2)))  # (batch, heads, n, d)
    X = tf.transpose(X, perm=(0, 2, 1, 3))  # (batch, n, heads, d)
    return tf.reshape(X, (-1, size(X, 1), num_heads * size(X, 3)))  # (batch, n, h * d)


class MultiHeadAttention(Layer):
    """Multi-head scaled dot-product attention. W_q, W_k, W_v project queries, keys and
    values to num_hiddens features (num_heads heads of num_hiddens / num_heads each); W_o
    mixes the concatenated heads. Input sizes are inferred on the first call."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        check_int("num_hiddens", num_hiddens, minimum=1)
        check_heads(num_hiddens, num_heads)
        check_dropout(dropout)
        check_bool("bias", bias)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_k = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_v = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_o = keras.layers.Dense(num_hiddens, use_bias=bias)

    def call(self, queries, keys, values, valid_lens=None, training=None):
        # queries: (batch, queries, q), keys: (batch, keys, k), values: (batch, keys, v)
        shapes = dict(
            queries=(queries, "batch n_q d_q"),
            keys=(keys, "batch n_k d_k"),
            values=(values, "batch n_k d_v"),
        )
        if valid_lens is not None:
            valid_lens = tf.convert_to_tensor(valid_lens)
            shapes["valid_lens"] = (valid_lens, valid_lens_spec(valid_lens, "n_q"))
        check_shapes(**shapes)
        check_float(queries=queries, keys=keys, values=values)
        check_built_widths(self, queries=queries, keys=keys, values=values)
        if valid_lens is not None:  # checked here once, not by each head
            check_valid_lens("valid_lens", valid_lens)
        # After the projections and transpose_qkv: (batch * num_heads, n, num_hiddens / h)
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            # Each example's lengths, copied num_heads times in a row like its heads
            valid_lens = tf.repeat(valid_lens, self.num_heads, axis=0)
        # attend: the attention's call without its checks
        output = self.attention.attend(queries, keys, values, valid_lens, training)
        # output: (batch * num_heads, n_q, d) -> (batch, n_q, num_hiddens)
        return self.W_o(transpose_output(output, self.num_heads))

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, queries, keys)."""
        weights = self.attention.attention_weights  # (batch * num_heads, queries, keys)
        if weights is None:
            return None
        return tf.reshape(
            weights, (-1, self.num_heads, size(weights, 1), size(weights, 2))
        )
