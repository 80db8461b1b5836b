"""Multi-head attention in PyTorch (section 6): num_heads scaled dot-product attentions
over learned projections, computed in parallel by folding the heads into the batch axis.
Vaswani et al., 2017, "Attention is all you need"."""

import torch
from torch import nn

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


def transpose_qkv(X, num_heads):
    """(batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads).

    Head i of example b (features i * d ... i * d + d - 1 of X[b], d = num_hiddens /
    num_heads) becomes row b * num_heads + i: an example's heads are consecutive."""
    dims = check_shapes(X=(X, "batch n num_hiddens"))
    check_heads(dims["num_hiddens"], num_heads)
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (batch, n, heads, d)
    X = X.permute(0, 2, 1, 3)  # (batch, heads, n, d)
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
    X = X.permute(0, 2, 1, 3)  # (batch, n, heads, d)
    return X.reshape(X.shape[0], X.shape[1], -1)  # (batch, n, heads * d)


class MultiHeadAttention(nn.Module):
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
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens=None):
        # queries: (batch, queries, q), keys: (batch, keys, k), values: (batch, keys, v)
        shapes = dict(
            queries=(queries, "batch n_q d_q"),
            keys=(keys, "batch n_k d_k"),
            values=(values, "batch n_k d_v"),
        )
        if valid_lens is not None:
            if not torch.is_tensor(valid_lens):
                valid_lens = torch.as_tensor(valid_lens, device=queries.device)
            shapes["valid_lens"] = (valid_lens, valid_lens_spec(valid_lens, "n_q"))
        check_shapes(**shapes)
        check_float(queries=queries, keys=keys, values=values)
        check_built_widths(self, queries=queries, keys=keys, values=values)
        # Lengths are checked here, once (empty_rows: whether one is 0), not by each head
        empty_rows = valid_lens is not None and check_valid_lens("valid_lens", valid_lens)
        # After the projections and transpose_qkv: (batch * num_heads, n, num_hiddens / h)
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            # Each example's lengths, copied num_heads times in a row like its heads
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        # (batch * h, n_q, d); attend is the attention's forward without its checks
        output = self.attention.attend(queries, keys, values, valid_lens, empty_rows)
        return self.W_o(transpose_output(output, self.num_heads))  # (batch, n_q, hiddens)

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, queries, keys)."""
        weights = self.attention.attention_weights  # (batch * num_heads, queries, keys)
        if weights is None:
            return None
        return weights.reshape(-1, self.num_heads, *weights.shape[1:])
