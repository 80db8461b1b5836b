"""Attention scoring functions in PyTorch (section 3): masked softmax, additive and scaled
dot-product attention."""

import math

import torch
from torch import nn

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
from .layers import Dropout, row_softmax, short_rows


def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X (batch, queries, keys) that ignores the keys beyond
    each valid length. valid_lens: None, (batch,) or (batch, queries). A masked key gets
    weight 0 and gradient 0; a length of 0 gives a row of zeros; a length above the number
    of keys keeps all keys."""
    check_float(X=X)
    if valid_lens is None:
        check_shapes(X=(X, "batch queries keys"))
        return row_softmax(X)
    if not torch.is_tensor(valid_lens):
        valid_lens = torch.as_tensor(valid_lens, device=X.device)
    spec = valid_lens_spec(valid_lens)  # (batch,) or (batch, queries)
    check_shapes(X=(X, "batch queries keys"), valid_lens=(valid_lens, spec))
    empty_rows = check_valid_lens("valid_lens", valid_lens)  # whether a length is 0
    return softmax_with_lengths(X, valid_lens, empty_rows)


def softmax_with_lengths(X, valid_lens, empty_rows=True):
    """masked_softmax without its checks, for a layer that checked valid_lens at its entry
    (reading lengths waits for the device). empty_rows: whether a length may be 0."""
    if valid_lens is None:
        return row_softmax(X)
    bias, mask = length_bias(valid_lens, X.shape[-1], X.dtype)
    # The small (batch, queries or 1, keys) bias broadcasts over X, and the gradient
    # w.r.t. X passes through the addition unchanged
    weights = row_softmax(X + bias)
    # A row with no valid key (uniform after softmax) -> zeros; short rows: exact zeros
    if empty_rows or short_rows(X):
        weights = weights * mask
    return weights


def length_bias(valid_lens, num_keys, dtype):
    """(bias, mask), each (batch, queries or 1, num_keys) for valid_lens (batch,) or
    (batch, queries): mask[b, i, j] is True for the keys j that query i of example b may
    attend to; bias is 0 there and the lowest float elsewhere, so that a masked score
    plus its bias has exp() 0."""
    lens = valid_lens.reshape(-1, 1) if valid_lens.dim() == 1 else valid_lens
    keys = torch.arange(num_keys, device=valid_lens.device)
    mask = keys < lens.unsqueeze(-1)
    bias = torch.zeros(mask.shape, dtype=dtype, device=valid_lens.device)
    return bias.masked_fill_(~mask, torch.finfo(dtype).min), mask


class AdditiveAttention(nn.Module):
    """a(q, k) = w_v^T tanh(W_q q + W_k k): queries and keys may have different sizes.
    Bahdanau et al., 2015. Input sizes are inferred on the first call."""

    def __init__(self, num_hiddens, dropout):
        super().__init__()
        check_int("num_hiddens", num_hiddens, minimum=1)
        check_dropout(dropout)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
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
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # (batch, queries, keys) x (batch, keys, v) -> (batch, queries, v)
        return torch.bmm(self.dropout(self.attention_weights), values)


def fix_keys(attention, keys, values, valid_lens=None):
    """For a decoder that asks ``attention`` (an AdditiveAttention) one query per step
    of the same keys and values: W_k is applied to the keys once, here, not at every
    step. keys (batch, keys, k), values (batch, keys, v), valid_lens None or (batch,).

    Returns ``attend``: attend(queries (batch, 1, q)) -> (context (batch, 1, v),
    weights (batch, 1, keys)), the numbers of ``attention(queries, keys, values,
    valid_lens)`` and of its attention_weights."""
    hooks = (check_float, check_valid_lens)  # this framework's
    check_fix_keys(attention, AdditiveAttention, keys, values, valid_lens, *hooks)
    keys = attention.W_k(keys)  # (batch, keys, num_hiddens), for every call of attend
    bias = mask = None  # masked_softmax's (batch, 1, keys) terms, built once
    empty_rows = False  # whether a length is 0 (just checked: reading it does not wait)
    if valid_lens is not None:
        bias, mask = length_bias(valid_lens, keys.shape[1], keys.dtype)
        empty_rows = check_valid_lens("valid_lens", valid_lens)
    check_queries = query_checker(attention, keys, check_float)

    def attend(queries):
        check_queries(queries)
        # W_q q (batch, 1, h) broadcasts over the keys: (batch, keys, h)
        features = torch.tanh(attention.W_q(queries) + keys)
        scores = attention.w_v(features).transpose(1, 2)  # (batch, 1, keys)
        weights = row_softmax(scores if bias is None else scores + bias)
        # No valid key -> zero weights; short rows: exact zeros (see row_softmax)
        if mask is not None and (empty_rows or short_rows(scores)):
            weights = weights * mask
        # c = sum over t of alpha_t h_t, as a weighted sum: (batch, keys, 1) * (batch, keys,
        # v) summed over the keys (for one query, 2x faster than bmm with its backward)
        alphas = attention.dropout(weights).transpose(1, 2)
        return (alphas * values).sum(dim=1, keepdim=True), weights

    return attend


class DotProductAttention(nn.Module):
    """a(q, k) = q^T k / sqrt(d): scores that keep unit variance whatever the size d.
    Vaswani et al., 2017."""

    def __init__(self, dropout):
        super().__init__()
        check_dropout(dropout)
        self.dropout = Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
        # queries: (batch, queries, d), keys: (batch, keys, d), values: (batch, keys, v)
        shapes = dict(
            queries=(queries, "batch n_q d"),
            keys=(keys, "batch n_k d"),
            values=(values, "batch n_k d_v"),
        )
        if valid_lens is not None:
            if not torch.is_tensor(valid_lens):
                valid_lens = torch.as_tensor(valid_lens, device=queries.device)
            shapes["valid_lens"] = (valid_lens, valid_lens_spec(valid_lens, "n_q"))
        check_shapes(**shapes)
        check_float(queries=queries, keys=keys, values=values)
        empty_rows = valid_lens is not None and check_valid_lens("valid_lens", valid_lens)
        return self.attend(queries, keys, values, valid_lens, empty_rows)

    def attend(self, queries, keys, values, valid_lens=None, empty_rows=True):
        """forward without its checks, for a layer that checked its inputs."""
        d = queries.shape[-1]
        # baddbmm(bias, Q, K^T, beta, alpha) = beta * bias + alpha * Q K^T in one call: the
        # scale 1 / sqrt(d) and the mask's bias cost no pass over the scores of their own
        if valid_lens is None:
            bias, beta = queries.new_zeros(()), 0  # beta = 0: no bias
        else:
            bias, mask = length_bias(valid_lens, keys.shape[1], queries.dtype)
            beta = 1
        scores = torch.baddbmm(
            bias, queries, keys.transpose(1, 2), beta=beta, alpha=1 / math.sqrt(d)
        )
        self.attention_weights = row_softmax(scores)
        # No valid key -> zero weights; short rows: exact zeros (see row_softmax)
        if valid_lens is not None and (empty_rows or short_rows(scores)):
            self.attention_weights = self.attention_weights * mask
        return torch.bmm(self.dropout(self.attention_weights), values)
