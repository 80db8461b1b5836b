"""A decoder-only (prefix) language model in MXNet (Decoder-Only Models, the Key–Value Cache
and Rotary Embeddings): rotary position embeddings (Su et al., 2021), causal self-attention whose
cache holds the projected keys and values of every head, and a stack of such blocks whose
source part attends both ways (Raffel et al., 2020)."""

import math

from mxnet import np
from mxnet.gluon import nn

from .attention import DotProductAttention
from .positional import PositionalEncoding
from .tensors import checked
from .transformer import AddNorm, PositionWiseFFN


@checked
def rotary_embedding(X, offset=0, base=10000):
    """Rotate each pair of adjacent features (2i, 2i + 1) of X by the angle p * base ** (-2i / d),
    p the position of the row: offset, ..., offset + steps - 1 (the convention of Su et al.,
    2021, "pairs of adjacent features"; some libraries pair feature i with i + d / 2 instead).

    X (..., steps, d) floats with d even -> (..., steps, d)."""
    steps, d = X.shape[-2], X.shape[-1]
    # base ** (-2i / d) for i = 0, ..., d / 2 - 1: from one turn per step to base ** -1
    freqs = np.exp(np.arange(0, d, 2, ctx=X.ctx) * (-math.log(base) / d))
    positions = np.arange(offset, offset + steps, ctx=X.ctx)
    angles = np.expand_dims(positions, 1) * freqs  # (steps, d / 2)
    cos, sin = np.cos(angles).astype(X.dtype), np.sin(angles).astype(X.dtype)
    x1, x2 = X[..., 0::2], X[..., 1::2]  # (..., steps, d / 2) each: the pairs
    rotated = np.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), axis=-1)
    return rotated.reshape(X.shape)  # the pairs side by side again: (..., steps, d)


def _prefix_lengths(past, steps, prefix_lens, batch, ctx):
    """How many keys each new query sees: query i sits at position past + i and sees the keys
    0, ..., past + i (causal, aligned to the last key) and the whole prefix: max(past + i + 1,
    prefix_len). -> (batch, steps) int32."""
    lens = np.arange(past + 1, past + steps + 1, dtype="int32", ctx=ctx)
    lens = np.broadcast_to(lens, (batch, steps))
    if prefix_lens is None:
        return lens
    return np.maximum(lens, prefix_lens.reshape(-1, 1).astype("int32"))


@checked
class CausalSelfAttention(nn.Block):
    """Multi-head self-attention in which position p sees positions 0, ..., p and, given
    prefix_lens, the whole prefix; queries and keys carry rotary embeddings of their positions
    (if ``rotary``). Heads have num_hiddens / num_heads features.

    X (batch, steps, num_hiddens): positions past, ..., past + steps - 1; prefix_lens None
    or (batch,); cache None or (keys, values), each (batch, num_heads, past, head_size): the
    projected (and rotated) keys and values of positions 0, ..., past - 1. -> (output (batch,
    steps, num_hiddens), cache (keys, values) each (batch, num_heads, past + steps,
    head_size))."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False, rotary=True):
        super().__init__()
        self.num_hiddens, self.num_heads, self.rotary = num_hiddens, num_heads, rotary
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_k = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_v = nn.Dense(num_hiddens, use_bias=bias, flatten=False)
        self.W_o = nn.Dense(num_hiddens, use_bias=bias, flatten=False)

    def split_heads(self, X):
        """(batch, steps, num_heads * d) -> (batch, num_heads, steps, d)."""
        return np.swapaxes(X.reshape(X.shape[0], X.shape[1], self.num_heads, -1), 1, 2)

    def forward(self, X, prefix_lens=None, cache=None):
        batch, steps = X.shape[:2]
        past = 0 if cache is None else cache[0].shape[2]  # positions seen before
        Q, K, V = (self.split_heads(W(X)) for W in (self.W_q, self.W_k, self.W_v))
        if self.rotary:  # the new tokens sit at positions past, ..., past + steps - 1
            Q, K = rotary_embedding(Q, past), rotary_embedding(K, past)
        if cache is not None:  # the cached keys and values are projected already
            K = np.concatenate((cache[0], K), axis=2)
            V = np.concatenate((cache[1], V), axis=2)
        d = Q.shape[-1]
        lens = _prefix_lengths(past, steps, prefix_lens, batch, X.ctx)
        output = self.attention(  # heads folded into the batch: (batch * heads, n, d)
            Q.reshape(-1, steps, d),
            K.reshape(-1, past + steps, d),
            V.reshape(-1, past + steps, d),
            np.repeat(lens, self.num_heads, axis=0),
        )
        output = np.swapaxes(output.reshape(batch, self.num_heads, steps, d), 1, 2)
        return self.W_o(output.reshape(batch, steps, -1)), (K, V)

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, steps, past + steps)."""
        weights = self.attention.attention_weights  # (batch * num_heads, steps, keys)
        if weights is None:
            return None
        return weights.reshape(-1, self.num_heads, *weights.shape[1:])


@checked
class DecoderOnlyBlock(nn.Block):
    """CausalSelfAttention, then the position-wise FFN, each followed by AddNorm (post-norm,
    as the book's Transformer).

    X (batch, steps, num_hiddens), prefix_lens and cache as CausalSelfAttention's ->
    (output (batch, steps, num_hiddens), the attention's new cache)."""

    def __init__(
        self,
        num_hiddens,
        ffn_num_hiddens,
        num_heads,
        dropout,
        use_bias=False,
        rotary=True,
    ):
        super().__init__()
        self.attention = CausalSelfAttention(
            num_hiddens, num_heads, dropout, use_bias, rotary
        )
        self.addnorm1 = AddNorm(dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(dropout)

    def forward(self, X, prefix_lens=None, cache=None):
        Y, cache = self.attention(X, prefix_lens, cache)
        Y = self.addnorm1(X, Y)
        return self.addnorm2(Y, self.ffn(Y)), cache


@checked
class PrefixLM(nn.Block):
    """A decoder-only language model: token embeddings, ``num_layers`` DecoderOnlyBlocks
    (rotary position embeddings in every attention, no positional table) and a dense layer
    to vocab_size. With prefix_lens, the first prefix_lens[b] tokens of row b attend to each
    other both ways (the source and its separator) and the rest causally. With
    ``rotary=False``, the attentions rotate nothing and the embeddings, times
    sqrt(num_hiddens), get the sinusoidal encoding of their positions instead, as in the
    encoder–decoder Transformer.

    X (batch, steps) token indices; prefix_lens None or (batch,); caches None (nothing seen
    yet) or a tuple of num_layers (keys, values), each (batch, num_heads, past, head_size),
    past + steps <= max_len. -> (logits (batch, steps, vocab_size), caches of past + steps
    positions): call it again with the next tokens to go on."""

    def __init__(
        self,
        vocab_size,
        num_hiddens,
        ffn_num_hiddens,
        num_heads,
        num_layers,
        dropout,
        use_bias=False,
        max_len=1000,
        rotary=True,
    ):
        super().__init__()
        self.num_hiddens, self.num_layers, self.max_len = num_hiddens, num_layers, max_len
        self.rotary = rotary
        if not rotary:  # absolute positions, added once below the blocks
            self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.blks = nn.Sequential()
        for _ in range(num_layers):
            self.blks.add(
                DecoderOnlyBlock(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias, rotary
                )
            )
        self.dense = nn.Dense(vocab_size, flatten=False)

    def forward(self, X, prefix_lens=None, caches=None):
        caches = (None,) * self.num_layers if caches is None else caches
        X = self.embedding(X)
        if not self.rotary:  # the new tokens sit at positions past, past + 1, ...
            past = 0 if caches[0] is None else caches[0][0].shape[2]
            X = self.pos_encoding(X * math.sqrt(self.num_hiddens), past)
        new_caches = []
        for blk, cache in zip(self.blks, caches):
            X, cache = blk(X, prefix_lens, cache)
            new_caches.append(cache)
        return self.dense(X), tuple(new_caches)


__all__ = [
    "CausalSelfAttention",
    "DecoderOnlyBlock",
    "PrefixLM",
    "rotary_embedding",
]  # the names d2lcore.mxnet re-exports
