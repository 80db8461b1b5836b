"""Grouped-query and memory-efficient attention in MXNet (Grouped-Query and Memory-Efficient
Attention): fewer key-value heads, each shared by a group of query heads (Shazeer, 2019; Ainslie
et al., 2023), and attention over tiles of keys with an online softmax (Rabe and Staats, 2021;
Dao et al., 2022)."""

import math

from mxnet import np, npx
from mxnet.gluon import nn

from .attention import DotProductAttention
from .multihead import transpose_output, transpose_qkv
from .tensors import checked


@checked
class GroupedQueryAttention(nn.Block):
    """Multi-head attention whose num_heads query heads share num_kv_heads key-value heads:
    query head h reads key-value head h // (num_heads / num_kv_heads). num_kv_heads =
    num_heads is MultiHeadAttention, num_kv_heads = 1 multi-query attention. Heads have
    num_hiddens / num_heads features; W_k and W_v project to num_kv_heads of them.

    queries (batch, n_q, q), keys (batch, n_k, k), values (batch, n_k, v), valid_lens
    None, (batch,) or (batch, n_q) -> (batch, n_q, num_hiddens)."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads, dropout, bias=False):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.attention = DotProductAttention(dropout)
        head_size = num_hiddens // num_heads
        self.W_q = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_k = nn.Dense(num_kv_heads * head_size, use_bias=bias, flatten=False)
        self.W_v = nn.Dense(num_kv_heads * head_size, use_bias=bias, flatten=False)
        self.W_o = nn.Dense(num_hiddens, use_bias=bias, flatten=False)

    def forward(self, queries, keys, values, valid_lens=None):
        group = self.num_heads // self.num_kv_heads  # query heads per key-value head
        queries = transpose_qkv(self.W_q(queries), self.num_heads)  # (batch * H, n_q, d)
        keys = transpose_qkv(self.W_k(keys), self.num_kv_heads)  # (batch * H_kv, n_k, d)
        values = transpose_qkv(self.W_v(values), self.num_kv_heads)
        # Each key-value head copied group times in a row: row b * H + h holds head
        # h // group of example b, the one query head h reads
        keys = np.repeat(keys, group, axis=0)  # (batch * H, n_k, d)
        values = np.repeat(values, group, axis=0)
        if valid_lens is not None:
            # Each example's lengths, copied num_heads times in a row like its heads
            valid_lens = np.repeat(valid_lens, self.num_heads, axis=0)
        output = self.attention(queries, keys, values, valid_lens)  # (batch * H, n_q, d)
        return self.W_o(transpose_output(output, self.num_heads))  # (batch, n_q, hiddens)

    @property
    def attention_weights(self):
        """The last call's weights per query head, (batch, num_heads, n_q, n_k)."""
        weights = self.attention.attention_weights  # (batch * num_heads, n_q, n_k)
        if weights is None:
            return None
        return weights.reshape(-1, self.num_heads, *weights.shape[1:])


@checked
def tiled_attention(queries, keys, values, valid_lens=None, causal=False, tile_size=128):
    """Scaled dot-product attention computed tile_size keys at a time with an online softmax:
    the scores never exist for more than one tile. Query i sees key j if j < valid_lens (as in
    masked_softmax) and, if causal, j <= i (a causal mask is a length of i + 1 per query).

    queries (batch, n_q, d), keys (batch, n_k, d), values (batch, n_k, v), valid_lens None,
    (batch,) or (batch, n_q) -> output (batch, n_q, v) and the log-sum-exp of each query's
    scores over the keys it sees, (batch, n_q). A query that sees no key gets an output of
    zeros and a log-sum-exp of -inf."""
    batch, n_q, d = queries.shape
    n_k, ctx, dtype = keys.shape[1], queries.ctx, queries.dtype
    queries = queries / math.sqrt(d)
    if valid_lens is None:
        lens = np.full((batch, 1), n_k, ctx=ctx, dtype=dtype)
    else:  # (batch, 1 or n_q)
        lens = valid_lens.reshape(-1, 1) if valid_lens.ndim == 1 else valid_lens
        lens = lens.astype(dtype)
    if causal:  # query i sees keys 0 ... i: at most i + 1 of them
        lens = np.minimum(lens, np.arange(1, n_q + 1, ctx=ctx, dtype=dtype))
    # Running state per query: the largest score m, the sum l of exp(score - m) and the
    # sum of exp(score - m) * value, over the keys of the tiles seen so far
    m = np.full((batch, n_q), -math.inf, ctx=ctx, dtype=dtype)
    l = np.zeros((batch, n_q), ctx=ctx, dtype=dtype)
    acc = np.zeros((batch, n_q, values.shape[-1]), ctx=ctx, dtype=values.dtype)
    for start in range(0, n_k, tile_size):
        K, V = keys[:, start : start + tile_size], values[:, start : start + tile_size]
        scores = npx.batch_dot(queries, K, transpose_b=True)  # (batch, n_q, tile)
        cols = np.arange(start, start + K.shape[1], ctx=ctx, dtype=dtype)
        seen = cols < np.expand_dims(lens, -1)  # (batch, n_q or 1, tile)
        scores = np.where(seen, scores, np.full_like(scores, -math.inf))
        m_new = np.maximum(m, scores.max(axis=-1))
        # -inf while a query has seen no key: subtract 0 then, so that exp() gives 0, not NaN
        shift = np.where(np.isinf(m_new), np.zeros_like(m_new), m_new)
        p = np.exp(scores - np.expand_dims(shift, -1))  # (batch, n_q, tile)
        rescale = np.exp(m - shift)  # the old sums were relative to m: now to m_new
        l = rescale * l + p.sum(axis=-1)
        acc = np.expand_dims(rescale, -1) * acc + npx.batch_dot(p, V)
        m = m_new
    # A query that saw no key has l = 0 and acc = 0: divide by 1 to keep zeros
    output = acc / np.expand_dims(np.where(l > 0, l, np.ones_like(l)), -1)
    return output, m + np.log(l)


__all__ = [
    "GroupedQueryAttention",
    "tiled_attention",
]  # the names d2lcore.mxnet re-exports
