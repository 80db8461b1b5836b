"""Attention scoring functions in PyTorch (Attention Scoring
Functions): masked softmax, additive and scaled
dot-product attention."""

import math

import torch
from torch import nn

from .tensors import checked


@checked
def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X (batch, queries, keys) that ignores the keys beyond
    each valid length. valid_lens: None, (batch,) or (batch, queries). A masked key gets
    weight 0 and gradient 0, whatever its score; a length of 0 gives a row of zeros; a
    length above the number of keys keeps all keys."""
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens.reshape(-1, 1) if valid_lens.dim() == 1 else valid_lens
    # mask[b, i, j] is True for the keys j that query i of example b may attend to:
    # (batch, queries or 1, keys), broadcast over the queries
    mask = torch.arange(X.shape[-1], device=X.device) < lens.unsqueeze(-1)
    # A masked score, NaN and inf included, becomes the lowest float: its exp() is 0
    X = X.masked_fill(~mask, torch.finfo(X.dtype).min)
    # Times the mask: a row with no valid key (uniform after softmax) becomes zeros
    return torch.softmax(X, dim=-1) * mask


@checked
class AdditiveAttention(nn.Module):
    """a(q, k) = w_v^T tanh(W_q q + W_k k): queries and keys may have different sizes.
    Bahdanau et al., 2015. Input sizes are inferred on the first call.

    queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v),
    valid_lens None, (batch,) or (batch, queries) -> (batch, queries, v)."""

    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
        queries, keys = self.W_q(queries), self.W_k(keys)  # (batch, *, num_hiddens)
        # Every query meets every key by broadcasting:
        # (batch, queries, 1, hiddens) + (batch, 1, keys, hiddens)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # (batch, queries, keys) x (batch, keys, v) -> (batch, queries, v)
        return torch.bmm(self.dropout(self.attention_weights), values)


@checked
class DotProductAttention(nn.Module):
    """a(q, k) = q^T k / sqrt(d): scores that keep unit variance whatever the size d.
    Vaswani et al., 2017.

    queries (batch, queries, d), keys (batch, keys, d), values (batch, keys, v),
    valid_lens None, (batch,) or (batch, queries) -> (batch, queries, v)."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # (Q / sqrt(d)) K^T: the division on the queries, smaller than the scores
        scores = torch.bmm(queries / math.sqrt(d), keys.transpose(1, 2))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


__all__ = [
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
]  # the names d2lcore.torch re-exports
