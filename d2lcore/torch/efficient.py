"""Grouped-query and memory-efficient attention in PyTorch (Grouped-Query and Memory-Efficient
Attention): fewer key-value heads, each shared by a group of query heads (Shazeer, 2019; Ainslie
et al., 2023), and attention over tiles of keys with an online softmax (Rabe and Staats, 2021;
Dao et al., 2022)."""

import math

import torch
from torch import nn

from .multihead import MultiHeadAttention, transpose_output, transpose_qkv
from .tensors import checked


@checked
class GroupedQueryAttention(MultiHeadAttention):
    """Multi-head attention whose num_heads query heads share num_kv_heads key-value heads:
    query head h reads key-value head h // (num_heads / num_kv_heads). num_kv_heads =
    num_heads is MultiHeadAttention, num_kv_heads = 1 multi-query attention. Heads have
    num_hiddens / num_heads features; W_k and W_v project to num_kv_heads of them.

    queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v),
    valid_lens None, (batch,) or (batch, queries) -> (batch, queries, num_hiddens)."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads, dropout, bias=False):
        super().__init__(num_hiddens, num_heads, dropout, bias)
        self.num_kv_heads = num_kv_heads
        # Narrower key and value projections: num_kv_heads heads of num_hiddens / num_heads
        kv_hiddens = num_kv_heads * (num_hiddens // num_heads)
        self.W_k = nn.LazyLinear(kv_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(kv_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens=None):
        group = self.num_heads // self.num_kv_heads  # query heads per key-value head
        queries = transpose_qkv(self.W_q(queries), self.num_heads)  # (batch * H, n_q, d)
        keys = transpose_qkv(self.W_k(keys), self.num_kv_heads)  # (batch * H_kv, n_k, d)
        values = transpose_qkv(self.W_v(values), self.num_kv_heads)
        # Each key-value head copied group times in a row: row b * H + h holds head
        # h // group of example b, the one query head h reads
        keys = torch.repeat_interleave(keys, group, dim=0)  # (batch * H, n_k, d)
        values = torch.repeat_interleave(values, group, dim=0)
        if valid_lens is not None:
            # Each example's lengths, copied num_heads times in a row like its heads
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
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
    batch, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    queries = queries / math.sqrt(queries.shape[-1])
    if valid_lens is None:
        lens = torch.full((batch, 1), n_k, device=queries.device)
    else:  # (batch, 1 or n_q)
        lens = valid_lens.reshape(-1, 1) if valid_lens.dim() == 1 else valid_lens
    if causal:  # query i sees keys 0 ... i: at most i + 1 of them
        lens = torch.minimum(lens, torch.arange(1, n_q + 1, device=queries.device))
    # Running state per query: the largest score m, the sum l of exp(score - m) and the
    # sum of exp(score - m) * value, over the keys of the tiles seen so far
    m = torch.full((batch, n_q), -math.inf, dtype=queries.dtype, device=queries.device)
    l = torch.zeros((batch, n_q), dtype=queries.dtype, device=queries.device)
    acc = torch.zeros(
        (batch, n_q, values.shape[-1]), dtype=values.dtype, device=values.device
    )
    for start in range(0, n_k, tile_size):
        K, V = keys[:, start : start + tile_size], values[:, start : start + tile_size]
        scores = torch.bmm(queries, K.transpose(1, 2))  # (batch, n_q, tile)
        cols = torch.arange(start, start + K.shape[1], device=queries.device)
        seen = cols < lens.unsqueeze(-1)  # (batch, n_q or 1, tile)
        scores = scores.masked_fill(~seen, -math.inf)
        m_new = torch.maximum(m, scores.amax(dim=-1))
        # -inf while a query has seen no key: subtract 0 then, so that exp() gives 0, not NaN
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(scores - shift.unsqueeze(-1))  # (batch, n_q, tile)
        rescale = torch.exp(m - shift)  # the old sums were relative to m: now to m_new
        l = rescale * l + p.sum(dim=-1)
        acc = rescale.unsqueeze(-1) * acc + torch.bmm(p, V)
        m = m_new
    # A query that saw no key has l = 0 and acc = 0: divide by 1 to keep zeros
    output = acc / torch.where(l > 0, l, torch.ones_like(l)).unsqueeze(-1)
    return output, m + torch.log(l)


__all__ = [
    "GroupedQueryAttention",
    "tiled_attention",
]  # the names d2lcore.torch re-exports
