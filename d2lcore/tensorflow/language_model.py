"""A decoder-only (prefix) language model in TensorFlow (Decoder-Only Models, the Key–Value Cache
and Rotary Embeddings): rotary position embeddings (Su et al., 2021), causal self-attention whose
cache holds the projected keys and values of every head, and a stack of such blocks whose
source part attends both ways (Raffel et al., 2020)."""

import math

import keras
import tensorflow as tf

from .attention import DotProductAttention
from .layers import Layer
from .positional import PositionalEncoding
from .tensors import checked
from .transformer import AddNorm, PositionWiseFFN


@checked
def rotary_embedding(X, offset=0, base=10000):
    """Rotate each pair of adjacent features (2i, 2i + 1) of X by the angle p * base ** (-2i / d),
    p the position of the row: offset, ..., offset + steps - 1 (the convention of Su et al.,
    2021, "pairs of adjacent features"; some libraries pair feature i with i + d / 2 instead).
    offset may be a scalar tensor (a cache's length inside a graph).

    X (..., steps, d) floats with d even -> (..., steps, d)."""
    steps, d = tf.shape(X)[-2], X.shape[-1]
    # base ** (-2i / d) for i = 0, ..., d / 2 - 1: from one turn per step to base ** -1
    freqs = tf.exp(tf.range(0, d, 2, dtype=tf.float32) * (-math.log(base) / d))
    positions = tf.cast(tf.range(steps) + tf.cast(offset, tf.int32), tf.float32)
    angles = positions[:, None] * freqs  # (steps, d / 2)
    cos, sin = tf.cast(tf.cos(angles), X.dtype), tf.cast(tf.sin(angles), X.dtype)
    x1, x2 = X[..., 0::2], X[..., 1::2]  # (..., steps, d / 2) each: the pairs
    rotated = tf.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), axis=-1)
    # The pairs side by side again: (..., steps, d)
    return tf.reshape(rotated, tf.shape(X))


def _prefix_lengths(past, steps, prefix_lens, batch):
    """How many keys each new query sees: query i sits at position past + i and sees the keys
    0, ..., past + i (causal, aligned to the last key) and the whole prefix: max(past + i + 1,
    prefix_len). -> (batch, steps) int32."""
    lens = tf.broadcast_to(tf.range(past + 1, past + steps + 1), (batch, steps))
    if prefix_lens is None:
        return lens
    return tf.maximum(lens, tf.reshape(tf.cast(prefix_lens, tf.int32), (-1, 1)))


@checked
class CausalSelfAttention(Layer):
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
        self.W_q = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_k = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_v = keras.layers.Dense(num_hiddens, use_bias=bias)
        self.W_o = keras.layers.Dense(num_hiddens, use_bias=bias)

    def split_heads(self, X):
        """(batch, steps, num_heads * d) -> (batch, num_heads, steps, d)."""
        d = X.shape[-1] // self.num_heads
        X = tf.reshape(X, (tf.shape(X)[0], tf.shape(X)[1], self.num_heads, d))
        return tf.transpose(X, perm=(0, 2, 1, 3))

    def call(self, X, prefix_lens=None, cache=None):
        batch, steps = tf.shape(X)[0], tf.shape(X)[1]
        past = 0 if cache is None else tf.shape(cache[0])[2]  # positions seen before
        Q, K, V = (self.split_heads(W(X)) for W in (self.W_q, self.W_k, self.W_v))
        if self.rotary:  # the new tokens sit at positions past, ..., past + steps - 1
            Q, K = rotary_embedding(Q, past), rotary_embedding(K, past)
        if cache is not None:  # the cached keys and values are projected already
            K, V = tf.concat((cache[0], K), axis=2), tf.concat((cache[1], V), axis=2)
        d = Q.shape[-1]
        lens = _prefix_lengths(past, steps, prefix_lens, batch)
        output = self.attention(  # heads folded into the batch: (batch * heads, n, d)
            tf.reshape(Q, (-1, steps, d)),
            tf.reshape(K, (-1, past + steps, d)),
            tf.reshape(V, (-1, past + steps, d)),
            tf.repeat(lens, self.num_heads, axis=0),
        )
        output = tf.transpose(
            tf.reshape(output, (batch, self.num_heads, steps, d)), (0, 2, 1, 3)
        )
        return self.W_o(tf.reshape(output, (batch, steps, self.num_heads * d))), (K, V)

    @property
    def attention_weights(self):
        """The last call's weights per head, (batch, num_heads, steps, past + steps)."""
        weights = self.attention.attention_weights  # (batch * num_heads, steps, keys)
        if weights is None:
            return None
        steps, keys = tf.shape(weights)[1], tf.shape(weights)[2]
        return tf.reshape(weights, (-1, self.num_heads, steps, keys))


@checked
class DecoderOnlyBlock(Layer):
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

    def call(self, X, prefix_lens=None, cache=None):
        Y, cache = self.attention(X, prefix_lens, cache)
        Y = self.addnorm1(X, Y)
        return self.addnorm2(Y, self.ffn(Y)), cache


@checked
class PrefixLM(Layer):
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
        self.embedding = keras.layers.Embedding(vocab_size, num_hiddens)
        self.blks = [
            DecoderOnlyBlock(
                num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias, rotary
            )
            for _ in range(num_layers)
        ]
        self.dense = keras.layers.Dense(vocab_size)

    def call(self, X, prefix_lens=None, caches=None):
        caches = (None,) * self.num_layers if caches is None else caches
        X = self.embedding(X)
        if not self.rotary:  # the new tokens sit at positions past, past + 1, ...
            past = 0 if caches[0] is None else tf.shape(caches[0][0])[2]
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
]  # the names d2lcore.tensorflow re-exports
