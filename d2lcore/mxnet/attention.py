"""Attention scoring functions in MXNet (section 3): masked softmax, additive and scaled
dot-product attention; additive attention's steps against fixed keys (fix_keys)."""

import math

import numpy as onp
from mxnet import np, npx
from mxnet.gluon import nn

from d2lcore.checks import check_fix_keys, query_checker

from .checks import check_float, check_valid_lens, checked


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
    keys = np.arange(X.shape[-1], ctx=X.ctx)
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


def prepare_keys(attention, keys, valid_lens=None):
    """What every query of ``attention`` (an AdditiveAttention) against the same keys
    needs, computed once for AdditiveStep: keys (batch, n_k, k), valid_lens None or
    (batch,) -> (W_k keys (batch, n_k, num_hiddens), lens (batch, 1) int32: each
    example's number of valid keys, n_k where valid_lens is None or larger, ones (batch,
    n_k, 1)). No checks: fix_keys and the decoders check their arguments."""
    keys = attention.W_k(keys)  # (batch, n_k, num_hiddens)
    batch, n_k = keys.shape[:2]
    if valid_lens is None:
        lens = np.full((batch, 1), n_k, dtype="int32", ctx=keys.ctx)
    else:  # (npx.softmax reads a length above the number of keys as garbage: cap it)
        lens = np.minimum(valid_lens.reshape(-1, 1), n_k).astype("int32")
    ones = np.ones((batch, n_k, 1), dtype=keys.dtype, ctx=keys.ctx)  # see AdditiveStep
    return keys, lens, ones


class AdditiveStep(nn.HybridBlock):
    """One query of an AdditiveAttention layer, with the layer's own W_q, w_v and dropout,
    against keys, lengths and ones from prepare_keys: the context and the weights of the
    layer's forward, with MXNet's fast operators. It runs eagerly (fix_keys' attend) or
    inside a hybridized block's graph.

    query (batch, 1, q), keys (batch, n_k, h): W_k k, values (batch, n_k, v), lens
    (batch, 1) int32, ones (batch, n_k, 1) -> (context (batch, 1, v), weights (batch, 1,
    n_k))."""

    def __init__(self, attention):
        super().__init__()
        # The layer's blocks, children here too: a graph that runs this step finds their
        # weights through it
        self.W_q, self.w_v, self.dropout = attention.W_q, attention.w_v, attention.dropout

    def hybrid_forward(self, F, query, keys, values, lens, ones):
        # W_q q is added to every key through a batched product with the column of ones,
        # (batch, n_k, 1) x (batch, 1, h) -> (batch, n_k, h): the sums of broadcasting,
        # whose gradient MXNet computes slowly
        query = F.npx.batch_dot(ones, self.W_q(query))
        # tanh(W_q q + W_k k), (batch, n_k, h): MXNet's activation operator computes tanh
        # several times faster than np.tanh
        features = F.npx.activation(query + keys, act_type="tanh")
        scores = F.np.swapaxes(self.w_v(features), 1, 2)  # a(q, k): (batch, 1, n_k)
        # Softmax over the first lens[b] keys; the others get 0 (none: all 0)
        weights = F.npx.softmax(scores, lens, axis=-1, use_length=True)
        # The context, (batch, 1, n_k) x (batch, n_k, v) -> (batch, 1, v)
        return F.npx.batch_dot(self.dropout(weights), values), weights


def fix_keys(attention, keys, values, valid_lens=None):
    """For a decoder that asks ``attention`` (an AdditiveAttention) one query per step
    of the same keys and values: W_k is applied to the keys once, here, not at every
    step. keys (batch, keys, k), values (batch, keys, v), valid_lens None or (batch,).

    Returns ``attend``: attend(queries (batch, 1, q)) -> (context (batch, 1, v),
    weights (batch, 1, keys)), the numbers of ``attention(queries, keys, values,
    valid_lens)`` and of its attention_weights. The work is prepare_keys' and
    AdditiveStep's."""
    hooks = (check_float, check_valid_lens)  # this framework's
    check_fix_keys(attention, AdditiveAttention, keys, values, valid_lens, *hooks)
    # W_k keys (batch, keys, num_hiddens), lens (batch, 1), ones: for every call of attend
    keys, lens, ones = prepare_keys(attention, keys, valid_lens)
    step = AdditiveStep(attention)  # not hybridized: each call runs its operations
    check_queries = query_checker(attention, keys, check_float)

    def attend(queries):
        check_queries(queries)
        return step(queries, keys, values, lens, ones)

    return attend


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
