"""Attention scoring functions in MXNet (Attention Scoring
Functions): masked softmax, additive and scaled
dot-product attention."""

import math

import numpy as onp
from mxnet import np, npx
from mxnet.gluon import nn

from .tensors import checked


@checked
def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X (batch, queries, keys) that ignores the keys beyond
    each valid length. valid_lens: None, (batch,) or (batch, queries). A masked key gets
    weight 0 and gradient 0; a length of 0 gives a row of zeros; a length above the number
    of keys keeps all keys."""
    if valid_lens is None:
        return npx.softmax(X, axis=-1)
    # (batch, queries or 1)
    lens = valid_lens.reshape(-1, 1) if valid_lens.ndim == 1 else valid_lens
    # mask[b, i, j] is True for the keys j that query i of example b may attend to
    keys = np.arange(X.shape[-1], ctx=X.ctx, dtype=X.dtype)
    mask = keys < np.expand_dims(lens.astype(X.dtype), -1)  # (batch, queries or 1, keys)
    # The lowest float makes exp() of a masked score 0; multiplying by the mask then turns a
    # row with no valid key (uniform after softmax) into zeros instead of an average.
    lowest = float(onp.finfo(X.dtype).min)
    X = np.where(mask, X, np.full_like(X, lowest))
    return npx.softmax(X, axis=-1) * mask.astype(X.dtype)


@checked
class AdditiveAttention(nn.Block):
    """a(q, k) = w_v^T tanh(W_q q + W_k k): queries and keys may have different sizes.
    Bahdanau et al., 2015. Input sizes are inferred on the first call.

    queries (batch, n_q, q), keys (batch, n_k, k), values (batch, n_k, v), valid_lens
    None, (batch,) or (batch, n_q) -> (batch, n_q, v)."""

    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_q = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.W_k = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.w_v = nn.Dense(1, use_bias=False, flatten=False)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
        queries, keys = self.W_q(queries), self.W_k(keys)  # (batch, *, num_hiddens)
        # Every query meets every key by broadcasting:
        # (batch, queries, 1, hiddens) + (batch, 1, keys, hiddens)
        features = np.tanh(np.expand_dims(queries, 2) + np.expand_dims(keys, 1))
        scores = np.squeeze(self.w_v(features), axis=-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # (batch, queries, keys) x (batch, keys, v) -> (batch, queries, v)
        return npx.batch_dot(self.dropout(self.attention_weights), values)


@checked
class DotProductAttention(nn.Block):
    """a(q, k) = q^T k / sqrt(d): scores that keep unit variance whatever the size d.
    Vaswani et al., 2017.

    queries (batch, n_q, d), keys (batch, n_k, d), values (batch, n_k, v), valid_lens
    None, (batch,) or (batch, n_q) -> (batch, n_q, v)."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # (Q / sqrt(d)) K^T: the division on the queries, smaller than the scores
        scores = npx.batch_dot(queries / math.sqrt(d), keys, transpose_b=True)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return npx.batch_dot(self.dropout(self.attention_weights), values)


__all__ = [
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
]  # the names d2lcore.mxnet re-exports
