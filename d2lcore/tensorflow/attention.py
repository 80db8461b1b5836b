"""Attention scoring functions in TensorFlow (section 3): masked softmax, additive and scaled
dot-product attention."""

import math

import keras
import tensorflow as tf

from d2lcore.checks import (
    check_built_widths,
    check_dropout,
    check_fix_keys,
    check_int,
    check_shapes,
    query_checker,
    valid_lens_spec,
)

from .checks import check_float, check_valid_lens
from .layers import Dropout


def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X (batch, queries, keys) that ignores the keys beyond
    each valid length. valid_lens: None, (batch,) or (batch, queries). A masked key gets
    weight 0 and gradient 0; a length of 0 gives a row of zeros; a length above the number
    of keys keeps all keys."""
    check_float(X=X)
    if valid_lens is None:
        check_shapes(X=(X, "batch queries keys"))
        return tf.nn.softmax(X, axis=-1)
    valid_lens = tf.convert_to_tensor(valid_lens)
    spec = valid_lens_spec(valid_lens)  # (batch,) or (batch, queries)
    check_shapes(X=(X, "batch queries keys"), valid_lens=(valid_lens, spec))
    check_valid_lens("valid_lens", valid_lens)
    return softmax_with_lengths(X, valid_lens)


def softmax_with_lengths(X, valid_lens):
    """masked_softmax without its checks, for a layer that checked valid_lens at its
    entry."""
    if valid_lens is None:
        return tf.nn.softmax(X, axis=-1)
    lens = tf.reshape(valid_lens, (-1, 1)) if valid_lens.shape.rank == 1 else valid_lens
    # mask[b, i, j] is True for the keys j that query i of example b may attend to
    keys = tf.range(tf.shape(X)[-1], dtype=X.dtype)
    mask = keys < tf.cast(lens, X.dtype)[..., None]  # (batch, queries or 1, keys)
    # The lowest float added to a masked score makes its exp() 0. The small bias broadcasts
    # over X, and the gradient w.r.t. X passes through the addition unchanged
    bias = tf.where(mask, tf.constant(0, X.dtype), X.dtype.min)
    weights = tf.nn.softmax(X + bias, axis=-1)
    # A row with no valid key (uniform after softmax) -> zeros; tf.cond decides on the
    # device, and spares the multiplication when no length is 0
    return tf.cond(
        tf.reduce_any(lens == 0),
        lambda: weights * tf.cast(mask, X.dtype),
        lambda: weights,
    )


class AdditiveAttention(keras.layers.Layer):
    """a(q, k) = w_v^T tanh(W_q q + W_k k): queries and keys may have different sizes.
    Bahdanau et al., 2015. Input sizes are inferred on the first call."""

    def __init__(self, num_hiddens, dropout):
        super().__init__()
        check_int("num_hiddens", num_hiddens, minimum=1)
        check_dropout(dropout)
        self.W_q = keras.layers.Dense(num_hiddens, use_bias=False)
        self.W_k = keras.layers.Dense(num_hiddens, use_bias=False)
        self.w_v = keras.layers.Dense(1, use_bias=False)
        self.dropout = Dropout(dropout)
        self.attention_weights = None

    def call(self, queries, keys, values, valid_lens=None, training=None):
        # queries: (batch, queries, q), keys: (batch, keys, k), values: (batch, keys, v)
        check_shapes(
            queries=(queries, "batch n_q d_q"),
            keys=(keys, "batch n_k d_k"),
            values=(values, "batch n_k d_v"),
        )
        check_float(queries=queries, keys=keys, values=values)
        check_built_widths(self, queries=queries, keys=keys)
        queries, keys = self.W_q(queries), self.W_k(keys)  # (batch, *, num_hiddens)
        # Every query meets every key by broadcasting:
        # (batch, queries, 1, hiddens) + (batch, 1, keys, hiddens)
        features = tf.tanh(queries[:, :, None, :] + keys[:, None, :, :])
        scores = tf.squeeze(self.w_v(features), axis=-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # (batch, queries, keys) x (batch, keys, v) -> (batch, queries, v)
        weights = self.dropout(self.attention_weights, training=training)
        return tf.matmul(weights, values)


def fix_keys(attention, keys, values, valid_lens=None):
    """For a decoder that asks ``attention`` (an AdditiveAttention) one query per step
    of the same keys and values: W_k is applied to the keys once, here, not at every
    step. keys (batch, keys, k), values (batch, keys, v), valid_lens None or (batch,).

    Returns ``attend``: attend(queries (batch, 1, q), training=None) -> (context (batch, 1, v),
    weights (batch, 1, keys)), the numbers of ``attention(queries, keys, values,
    valid_lens)`` and of its attention_weights."""
    if valid_lens is not None:
        valid_lens = tf.convert_to_tensor(valid_lens)
    hooks = (check_float, check_valid_lens)  # this framework's
    check_fix_keys(attention, AdditiveAttention, keys, values, valid_lens, *hooks)
    # Keras marks a layer built when it is called, and attend calls only the sublayers
    attention.built = True
    keys = attention.W_k(keys)  # (batch, keys, num_hiddens), for every call of attend
    mask = None  # (batch, 1, keys): True for the keys within each valid length
    if valid_lens is not None:
        positions = tf.range(tf.shape(keys)[1])
        lens = tf.cast(tf.reshape(valid_lens, (-1, 1, 1)), positions.dtype)
        mask = positions[None, None, :] < lens
    check_queries = query_checker(attention, keys, check_float)

    def attend(queries, training=None):
        check_queries(queries)
        # W_q q (batch, 1, h) broadcasts over the keys: (batch, keys, h)
        features = tf.tanh(attention.W_q(queries) + keys)
        scores = tf.transpose(attention.w_v(features), (0, 2, 1))  # (batch, 1, keys)
        if mask is None:
            weights = tf.nn.softmax(scores, axis=-1)
        else:  # masked_softmax's numbers, with the mask built once
            scores = tf.where(mask, scores, scores.dtype.min)
            weights = tf.nn.softmax(scores, axis=-1) * tf.cast(mask, scores.dtype)
        dropped = attention.dropout(weights, training=training)
        return tf.matmul(dropped, values), weights

    return attend


class DotProductAttention(keras.layers.Layer):
    """a(q, k) = q^T k / sqrt(d): scores that keep unit variance whatever the size d.
    Vaswani et al., 2017."""

    def __init__(self, dropout):
        super().__init__()
        check_dropout(dropout)
        self.dropout = Dropout(dropout)
        self.attention_weights = None
        self.built = True  # no weights to create: ready before its first call

    def call(self, queries, keys, values, valid_lens=None, training=None):
        # queries: (batch, queries, d), keys: (batch, keys, d), values: (batch, keys, v)
        shapes = dict(
            queries=(queries, "batch n_q d"),
            keys=(keys, "batch n_k d"),
            values=(values, "batch n_k d_v"),
        )
        if valid_lens is not None:
            valid_lens = tf.convert_to_tensor(valid_lens)
            shapes["valid_lens"] = (valid_lens, valid_lens_spec(valid_lens, "n_q"))
        check_shapes(**shapes)
        check_float(queries=queries, keys=keys, values=values)
        if valid_lens is not None:
            check_valid_lens("valid_lens", valid_lens)
        return self.attend(queries, keys, values, valid_lens, training)

    def attend(self, queries, keys, values, valid_lens=None, training=None):
        """call without its checks, for a layer that checked its inputs."""
        d = queries.shape[-1]
        # (Q / sqrt(d)) K^T: the division on the queries, smaller than the scores
        scores = tf.matmul(queries / math.sqrt(d), keys, transpose_b=True)
        self.attention_weights = softmax_with_lengths(scores, valid_lens)
        weights = self.dropout(self.attention_weights, training=training)
        return tf.matmul(weights, values)
