"""Grouped-query and memory-efficient attention in TensorFlow (Grouped-Query and Memory-Efficient
Attention): fewer key-value heads, each shared by a group of query heads (Shazeer, 2019; Ainslie
et al., 2023), and attention over tiles of keys with an online softmax (Rabe and Staats, 2021;
Dao et al., 2022)."""

import math

import keras
import tensorflow as tf

from .multihead import MultiHeadAttention, transpose_output, transpose_qkv
from .tensors import checked


@checked
class GroupedQueryAttention(MultiHeadAttention):
    """Multi-head attention whose num_heads query heads share num_kv_heads key-value heads:
    query head h reads key-value head h // (num_heads / num_kv_heads). num_kv_heads =
    num_heads is MultiHeadAttention, num_kv_heads = 1 multi-query attention. Heads have
    num_hiddens / num_heads features; W_k and W_v project to num_kv_heads of them.

    queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v), valid_lens
    None, (batch,) or (batch, queries) -> (batch, queries, num_hiddens)."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads, dropout, bias=False):
        super().__init__(num_hiddens, num_heads, dropout, bias)
        self.num_kv_heads = num_kv_heads
        # Narrower key and value projections: num_kv_heads heads of num_hiddens / num_heads
        kv_hiddens = num_kv_heads * (num_hiddens // num_heads)
        self.W_k = keras.layers.Dense(kv_hiddens, use_bias=bias)
        self.W_v = keras.layers.Dense(kv_hiddens, use_bias=bias)

    def call(self, queries, keys, values, valid_lens=None):
        group = self.num_heads // self.num_kv_heads  # query heads per key-value head
        queries = transpose_qkv(self.W_q(queries), self.num_heads)  # (batch * H, n_q, d)
        keys = transpose_qkv(self.W_k(keys), self.num_kv_heads)  # (batch * H_kv, n_k, d)
        values = transpose_qkv(self.W_v(values), self.num_kv_heads)
        # Each key-value head copied group times in a row: row b * H + h holds head
        # h // group of example b, the one query head h reads
        keys = tf.repeat(keys, group, axis=0)  # (batch * H, n_k, d)
        values = tf.repeat(values, group, axis=0)
        if valid_lens is not None:
            # Each example's lengths, copied num_heads times in a row like its heads
            valid_lens = tf.repeat(valid_lens, self.num_heads, axis=0)
        output = self.attention(queries, keys, values, valid_lens)  # (batch * H, n_q, d)
        return self.W_o(transpose_output(output, self.num_heads))  # (batch, n_q, hiddens)


@checked
def tiled_attention(queries, keys, values, valid_lens=None, causal=False, tile_size=128):
    """Scaled dot-product attention computed tile_size keys at a time with an online softmax:
    the scores never exist for more than one tile. Query i sees key j if j < valid_lens (as in
    masked_softmax) and, if causal, j <= i (a causal mask is a length of i + 1 per query).

    queries (batch, n_q, d), keys (batch, n_k, d), values (batch, n_k, v), valid_lens None,
    (batch,) or (batch, n_q) -> output (batch, n_q, v) and the log-sum-exp of each query's
    scores over the keys it sees, (batch, n_q). A query that sees no key gets an output of
    zeros and a log-sum-exp of -inf."""
    batch, n_q, n_k = tf.shape(queries)[0], tf.shape(queries)[1], keys.shape[1]
    queries = queries / math.sqrt(queries.shape[-1])
    if valid_lens is None:
        lens = tf.fill((batch, 1), tf.cast(n_k, queries.dtype))
    else:  # (batch, 1 or n_q)
        lens = (
            tf.reshape(valid_lens, (-1, 1)) if valid_lens.shape.rank == 1 else valid_lens
        )
        lens = tf.cast(lens, queries.dtype)
    if causal:  # query i sees keys 0 ... i: at most i + 1 of them
        lens = tf.minimum(lens, tf.range(1, n_q + 1, dtype=queries.dtype))
    # Running state per query: the largest score m, the sum l of exp(score - m) and the
    # sum of exp(score - m) * value, over the keys of the tiles seen so far
    m = tf.fill((batch, n_q), tf.constant(-math.inf, queries.dtype))
    l = tf.zeros((batch, n_q), queries.dtype)
    acc = tf.zeros((batch, n_q, values.shape[-1]), values.dtype)
    for start in range(0, n_k, tile_size):
        K, V = keys[:, start : start + tile_size], values[:, start : start + tile_size]
        scores = tf.matmul(queries, K, transpose_b=True)  # (batch, n_q, tile)
        cols = tf.range(start, min(start + tile_size, n_k))
        seen = tf.cast(cols, queries.dtype) < lens[..., None]  # (batch, n_q or 1, tile)
        scores = tf.where(seen, scores, -math.inf)
        m_new = tf.maximum(m, tf.reduce_max(scores, axis=-1))
        # -inf while a query has seen no key: subtract 0 then, so that exp() gives 0, not NaN
        shift = tf.where(tf.math.is_inf(m_new), tf.zeros_like(m_new), m_new)
        p = tf.exp(scores - shift[..., None])  # (batch, n_q, tile)
        rescale = tf.exp(m - shift)  # the old sums were relative to m: now to m_new
        l = rescale * l + tf.reduce_sum(p, axis=-1)
        acc = rescale[..., None] * acc + tf.matmul(p, V)
        m = m_new
    # A query that saw no key has l = 0 and acc = 0: divide by 1 to keep zeros
    output = acc / tf.where(l > 0, l, tf.ones_like(l))[..., None]
    return output, m + tf.math.log(l)


__all__ = [
    "GroupedQueryAttention",
    "tiled_attention",
]  # the names d2lcore.tensorflow re-exports
