"""Multi-head attention in MXNet (section 6): num_heads scaled dot-product attentions over
learned projections, computed in parallel by folding the heads into the batch axis.
Vaswani et al., 2017, "Attention is all you need"."""

import math

from mxnet import np
from mxnet.gluon import nn

from d2lcore.checks import (
    check_bool,
    check_built_widths,
    check_dropout,
    check_heads,
    check_int,
    check_shapes,
    valid_lens_spec,
)

from .checks import check_float, check_valid_lens


def transpose_qkv(X, num_heads):
    """(batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads).

    Head i of example b (features i * d ... i * d + d - 1 of X[b], d = num_hiddens /
    num_heads) becomes row b * num_heads + i: an example's heads are consecutive."""
    dims = check_shapes(X=(X, "batch n num_hiddens"))
    check_heads(dims["num_hiddens"], num_heads)
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (batch, n, heads, d)
    X = np.transpose(X, (0, 2, 1, 3))  # (batch, heads, n, d)
    return X.reshape(-1, X.shape[2], X.shape[3])  # (batch * heads, n, d)


def transpose_output(X, num_heads):
    """(batch * num_heads, n, d) -> (batch, n, num_heads * d): undoes transpose_qkv."""
    check_int("num_heads", num_heads, minimum=1)
    dims = check_shapes(X=(X, "batch_heads n d"))
    if dims["batch_heads"] % num_heads:
        raise ValueError(
            f"X's first dimension ({dims['batch_heads']}) must be a multiple of "
            f"num_heads ({num_heads}): it holds batch * num_heads rows; got X of shape "
            f"{tuple(X.shape)}"
        )
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])  # (batch, heads, n, d)
    X = np.transpose(X, (0, 2, 1, 3))  # (batch, n, heads, d)
    return X.reshape(X.shape[0], X.shape[1], -1)  # (batch, n, heads * d)


class MultiHeadAttention(nn.HybridBlock):
    """Multi-head scaled dot-product attention. W_q, W_k, W_v project queries, keys and
    values to num_hiddens features (num_heads heads of num_hiddens / num_heads each); W_o
    mixes the concatenated heads. Input sizes are inferred on the first call.

    A HybridBlock, hybridized when built: forward checks the inputs, then runs
    hybrid_forward as one cached graph (Gluon's CachedOp) instead of some dozens of
    operations launched one by one from Python. In the graph shapes are unknown, so it
    folds the heads as transpose_qkv and transpose_output do with reshapes that need no
    sizes (``F.npx.reshape``: -2 keeps an axis, -5 merges two, -6 splits one), and masks
    with MXNet's softmax with lengths, which gives the weights of masked_softmax. Inside a
    hybridized parent's graph, a call takes the lengths from :meth:`lengths` and returns
    (output, weights (batch * num_heads, queries, keys)): the parent stores the weights
    with :meth:`keep_weights`."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        check_int("num_hiddens", num_hiddens, minimum=1)
        check_heads(num_hiddens, num_heads)
        check_dropout(dropout)
        check_bool("bias", bias)
        self.num_heads, self.d = num_heads, num_hiddens // num_heads  # d: per head
        self.dropout = nn.Dropout(dropout)
        self.W_q = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_k = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_v = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_o = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.head_weights = None  # the last call's, (batch * num_heads, queries, keys)
        self.hybridize(static_alloc=True)

    def lengths(self, queries, keys, valid_lens=None):
        """valid_lens (None, (batch,) or (batch, queries)) checked against queries (batch,
        n_q, d_q) and keys (batch, n_k, d_k), as an array; None gives n_k, every key."""
        if valid_lens is None:
            return np.full((queries.shape[0],), keys.shape[1], ctx=queries.ctx)
        if not isinstance(valid_lens, np.ndarray):
            valid_lens = np.array(valid_lens, ctx=queries.ctx)
        check_shapes(
            queries=(queries, "batch n_q d_q"),
            valid_lens=(valid_lens, valid_lens_spec(valid_lens, "n_q")),
        )
        check_valid_lens("valid_lens", valid_lens)
        return valid_lens

    def keep_weights(self, output, weights):
        """For a parent that ran this layer in its graph: store the layer's ``weights``
        (batch * num_heads, queries, keys) as those of the last call; return ``output``."""
        self.head_weights = weights
        return output

    def forward(self, queries, keys, values, valid_lens=None):
        # queries: (batch, queries, q), keys: (batch, keys, k), values: (batch, keys, v)
        if not isinstance(queries, np.ndarray):  # symbols: in a hybridized parent's graph
            return super().forward(queries, keys, values, valid_lens)
        check_shapes(
            queries=(queries, "batch n_q d_q"),
            keys=(keys, "batch n_k d_k"),
            values=(values, "batch n_k d_v"),
        )
        check_float(queries=queries, keys=keys, values=values)
        check_built_widths(self, queries=queries, keys=keys, values=values)
        valid_lens = self.lengths(queries, keys, valid_lens)
        output, self.head_weights = super().forward(queries, keys, values, valid_lens)
        return output

    def hybrid_forward(self, F, queries, keys, values, valid_lens):
        h = self.num_heads

        # (Swapping two axes is the transpose (0, 2, 1, 3) of transpose_qkv and
        # transpose_output; MXNet's swapaxes does it about twice as fast.)
        def fold(X):  # as transpose_qkv: (batch, n, num_hiddens) -> (batch * h, n, d)
            X = F.npx.reshape(X, (-2, -2, h, -1))  # (batch, n, heads, d)
            return F.npx.reshape(F.np.swapaxes(X, 1, 2), (-5, -2, -2))

        queries, keys = fold(self.W_q(queries)), fold(self.W_k(keys))
        values = fold(self.W_v(values))
        # (Q / sqrt(d)) K^T: the division on the queries, smaller than the scores
        scores = F.npx.batch_dot(queries / math.sqrt(self.d), keys, transpose_b=True)
        # Each query's number of keys, (batch * h, n_q), at most n_k: each example's
        # lengths repeated for its heads, as in the other frameworks' np.repeat
        num_keys = F.np.max(F.npx.arange_like(keys, axis=1)) + 1  # n_k
        positions = F.npx.arange_like(
            queries, axis=1
        )  # (n_q,), to broadcast over queries
        lens = F.npx.reshape(valid_lens.astype("float32"), (-2, -1))  # (batch, 1 or n_q)
        lens = F.np.minimum(F.np.repeat(lens, h, axis=0), num_keys) + positions * 0
        weights = F.npx.softmax(scores, lens.astype("int32"), axis=-1, use_length=True)
        output = F.npx.batch_dot(self.dropout(weights), values)  # (batch * h, n_q, d)
        # As transpose_output: (batch * h, n_q, d) -> (batch, n_q, num_hiddens)
        output = F.npx.reshape(output, (-6, -1, h, -2, -2))  # (batch, h, n_q, d)
        output = F.npx.reshape(F.np.swapaxes(output, 1, 2), (-2, -2, -5))
        return self.W_o(output), weights

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, queries, keys)."""
        weights = self.head_weights
        if weights is None:
            return None
        return weights.reshape(-1, self.num_heads, *weights.shape[1:])
