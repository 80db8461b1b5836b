"""Multi-head attention in MXNet (Multi-Head Attention): num_heads scaled dot-product attentions over
learned projections, computed in parallel by folding the heads into the batch axis.
Vaswani et al., 2017, "Attention is all you need"."""

import math

import mxnet as mx
from mxnet import np
from mxnet.gluon import nn

from .tensors import checked


@checked
def transpose_qkv(X, num_heads):
    """(batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads).

    Head i of example b (features i * d ... i * d + d - 1 of X[b], d = num_hiddens /
    num_heads) becomes row b * num_heads + i: an example's heads are consecutive. X may be
    a symbol of a hybridized graph, whose shape is unknown: npx.reshape's codes need no
    sizes (-2 keeps an axis, -5 merges two)."""
    F = mx.sym if isinstance(X, mx.sym.Symbol) else mx.nd  # symbols or arrays
    X = F.npx.reshape(X, (-2, -2, num_heads, -1))  # (batch, n, heads, d)
    X = F.np.swapaxes(X, 1, 2)  # (batch, heads, n, d)
    return F.npx.reshape(X, (-5, -2, -2))  # (batch * heads, n, d)


@checked
def transpose_output(X, num_heads):
    """(batch * num_heads, n, d) -> (batch, n, num_heads * d): undoes transpose_qkv. As
    there, -6 splits an axis in two."""
    F = mx.sym if isinstance(X, mx.sym.Symbol) else mx.nd  # symbols or arrays
    X = F.npx.reshape(X, (-6, -1, num_heads, -2, -2))  # (batch, heads, n, d)
    X = F.np.swapaxes(X, 1, 2)  # (batch, n, heads, d)
    return F.npx.reshape(X, (-2, -2, -5))  # (batch, n, heads * d)


@checked
class MultiHeadAttention(nn.HybridBlock):
    """Multi-head scaled dot-product attention. W_q, W_k, W_v project queries, keys and
    values to num_hiddens features (num_heads heads of num_hiddens / num_heads each); W_o
    mixes the concatenated heads. Input sizes are inferred on the first call.

    queries (batch, n_q, q), keys (batch, n_k, k), values (batch, n_k, v), valid_lens
    None, (batch,) or (batch, n_q) -> (batch, n_q, num_hiddens). forward gives the graph
    the lengths its softmax reads (see query_lengths).

    Once hybridized, each call runs hybrid_forward as one cached graph (Gluon's CachedOp).
    head_weights: the last call's weights, (batch * num_heads, n_q, n_k); in a hybridized
    parent's graph a symbol, which the parent returns from its graph."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        self.num_heads, self.d = num_heads, num_hiddens // num_heads  # d: per head
        self.dropout = nn.Dropout(dropout)
        self.W_q = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_k = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_v = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_o = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.head_weights = None

    @staticmethod
    def query_lengths(queries, keys, valid_lens=None):
        """valid_lens (None: every key) as the graph's softmax reads them: one length per
        query, (batch, n_q) int32, at most n_k. Symbols (in a parent's graph, whose forward
        gave such lengths) pass as they are."""
        if isinstance(queries, mx.sym.Symbol):
            return valid_lens
        (batch, n_q), n_k = queries.shape[:2], keys.shape[1]
        if valid_lens is None:
            return np.full((batch, n_q), n_k, dtype="int32", ctx=queries.ctx)
        lens = np.minimum(valid_lens.reshape(batch, -1), n_k)  # (batch, 1 or n_q)
        return np.broadcast_to(lens, (batch, n_q)).astype("int32")

    def forward(self, queries, keys, values, valid_lens=None):
        # None, (batch,) or (batch, n_q) lengths -> the graph's (batch, n_q) int32
        valid_lens = self.query_lengths(queries, keys, valid_lens)
        output, self.head_weights = super().forward(queries, keys, values, valid_lens)
        return output

    def hybrid_forward(self, F, queries, keys, values, valid_lens):
        # After the projections and transpose_qkv: (batch * num_heads, n, d)
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        # Scaled dot-product attention of all heads at once: (Q / sqrt(d)) K^T
        scores = F.npx.batch_dot(queries / math.sqrt(self.d), keys, transpose_b=True)
        # Each example's lengths, repeated num_heads times in a row like its heads
        valid_lens = F.np.repeat(valid_lens, self.num_heads, axis=0)  # (batch * h, n_q)
        # The masked softmax: MXNet's softmax over the first valid_lens[i, j] keys
        weights = F.npx.softmax(scores, valid_lens, axis=-1, use_length=True)
        output = F.npx.batch_dot(self.dropout(weights), values)  # (batch * h, n_q, d)
        return self.W_o(transpose_output(output, self.num_heads)), weights

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, n_q, n_k)."""
        w = self.head_weights  # None before the first call
        return None if w is None else w.reshape(-1, self.num_heads, *w.shape[1:])


__all__ = [
    "MultiHeadAttention",
    "transpose_output",
    "transpose_qkv",
]  # the names d2lcore.mxnet re-exports
