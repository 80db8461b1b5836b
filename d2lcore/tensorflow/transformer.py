"""The Transformer in TensorFlow (The Transformer): position-wise FFN, add & norm, encoder and
decoder blocks, and the encoder and decoder built from them. Vaswani et al., 2017,
"Attention is all you need" (post-norm, as in the paper)."""

import math

import keras
import tensorflow as tf

from d2lcore.transformer import LAYER_NORM_EPS

from .encoder_decoder import AttentionDecoder, Encoder
from .layers import Layer
from .multihead import MultiHeadAttention
from .positional import PositionalEncoding
from .tensors import checked


@checked
class PositionWiseFFN(Layer):
    """The same two-layer MLP at every position: dense2(relu(dense1(X))).

    X (..., d) floats -> (..., ffn_num_outputs); d is inferred on the first call, and
    later calls keep it."""

    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = keras.layers.Dense(ffn_num_hiddens)
        self.relu = keras.layers.ReLU()
        self.dense2 = keras.layers.Dense(ffn_num_outputs)

    def call(self, X):
        return self.dense2(self.relu(self.dense1(X)))


@checked
class AddNorm(Layer):
    """Residual connection, then layer normalisation: LayerNorm(dropout(Y) + X).

    X, Y (..., d) floats of the same shape -> (..., d); d is fixed by the first call.
    LayerNorm normalises the last axis with epsilon LAYER_NORM_EPS (1e-5, the same in
    every framework; Keras's default is 1e-3) and learns a scale and a shift per feature."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = keras.layers.Dropout(dropout)
        self.ln = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPS)

    def call(self, X, Y):
        return self.ln(self.dropout(Y) + X)


@checked
class TransformerEncoderBlock(Layer):
    """Multi-head self-attention, then the position-wise FFN, each followed by AddNorm.

    X (batch, steps, num_hiddens) floats, valid_lens None, (batch,) or (batch, steps)
    lengths -> (batch, steps, num_hiddens). The residual connections need X's last axis to
    be num_hiddens."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(dropout)

    def call(self, X, valid_lens=None):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


@checked
class TransformerEncoder(Encoder):
    """Token embeddings times sqrt(num_hiddens), plus positional encodings, then
    ``num_layers`` encoder blocks.

    X (batch, steps <= max_len) token indices 0 ... vocab_size - 1, valid_lens None,
    (batch,) or (batch, steps) lengths -> (batch, steps, num_hiddens).
    ``attention_weights``: the last call's self-attention weights, (batch, num_layers,
    num_heads, steps, steps)."""

    block_class = TransformerEncoderBlock  # the block it stacks num_layers of

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
    ):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = keras.layers.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = [
            self.block_class(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias)
            for _ in range(num_layers)
        ]

    def call(self, X, valid_lens=None):
        # The embeddings are scaled up to the size of the encodings (which lie in [-1, 1])
        X = self.embedding(X) * math.sqrt(self.num_hiddens)
        X = self.pos_encoding(X)
        for blk in self.blks:
            X = blk(X, valid_lens)
        return X

    @property
    def attention_weights(self):
        """(batch, num_layers, num_heads, queries, keys), or None before the first call."""
        weights = [blk.attention.attention_weights for blk in self.blks]
        return None if weights[0] is None else tf.stack(weights, axis=1)


@checked
class TransformerDecoderBlock(Layer):
    """Causal self-attention, encoder–decoder attention, then the position-wise FFN, each
    followed by AddNorm.

    X (batch, steps, num_hiddens) floats: the block's inputs at positions past, ...,
    past + steps - 1; enc_outputs (batch, src_steps, num_hiddens) floats; enc_valid_lens
    None, (batch,) or (batch, steps) lengths; cache None or (batch, past, num_hiddens):
    the block's inputs at the earlier positions 0, ..., past - 1. Returns (output
    (batch, steps, num_hiddens), key_values (batch, past + steps, num_hiddens): the cache
    for the next call).

    Position past + i attends to positions 0, ..., past + i only, whatever the mode
    (training or not), so decoding a sequence step by step with the cache gives the same
    outputs as decoding it at once."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.self_attention = MultiHeadAttention(
            num_hiddens, num_heads, dropout, use_bias
        )
        self.addnorm1 = AddNorm(dropout)
        self.cross_attention = MultiHeadAttention(
            num_hiddens, num_heads, dropout, use_bias
        )
        self.addnorm2 = AddNorm(dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(dropout)

    def call(self, X, enc_outputs, enc_valid_lens=None, cache=None):
        if cache is None:
            key_values = X
        else:
            key_values = tf.concat((cache, X), axis=1)
        steps, total = tf.shape(X)[1], tf.shape(key_values)[1]
        # Causal mask: query i (position past + i) sees the first past + i + 1 keys
        lens = tf.range(total - steps + 1, total + 1)
        dec_valid_lens = tf.broadcast_to(lens, (tf.shape(X)[0], steps))  # (batch, steps)
        Y = self.addnorm1(
            X, self.self_attention(X, key_values, key_values, dec_valid_lens)
        )
        Z = self.addnorm2(
            Y, self.cross_attention(Y, enc_outputs, enc_outputs, enc_valid_lens)
        )
        return self.addnorm3(Z, self.ffn(Z)), key_values


@checked
class TransformerDecoder(AttentionDecoder):
    """Token embeddings times sqrt(num_hiddens), plus the positional encodings of their
    real positions, then ``num_layers`` decoder blocks and a dense layer to vocab_size.

    State: (enc_outputs (batch, src_steps, num_hiddens), enc_valid_lens None or (batch,)
    lengths, caches: a tuple of num_layers entries, all None or all (batch, past,
    num_hiddens)). ``call(X (batch, steps) token indices 0 ... vocab_size - 1, state)``,
    with past + steps <= max_len, -> (logits (batch, steps, vocab_size), new state) whose
    caches hold every position decoded so far: call it again with the next tokens to
    decode step by step. ``attention_weights``: the last call's (self-attention
    (batch, num_layers, num_heads, steps, past + steps), encoder–decoder attention
    (batch, num_layers, num_heads, steps, src_steps))."""

    block_class = TransformerDecoderBlock  # the block it stacks num_layers of

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
    ):
        super().__init__()
        self.num_hiddens, self.num_layers = num_hiddens, num_layers
        self.embedding = keras.layers.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = [
            self.block_class(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias)
            for _ in range(num_layers)
        ]
        self.dense = keras.layers.Dense(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens=None):
        return enc_outputs, enc_valid_lens, (None,) * self.num_layers

    def call(self, X, state):
        enc_outputs, enc_valid_lens, caches = state
        # Position past + i for the i-th token: the caches hold positions 0 ... past - 1
        past = 0 if caches[0] is None else tf.shape(caches[0])[1]
        X = self.embedding(X) * math.sqrt(self.num_hiddens)
        X = self.pos_encoding(X, past)
        new_caches = []
        for blk, cache in zip(self.blks, caches):
            X, key_values = blk(X, enc_outputs, enc_valid_lens, cache)
            new_caches.append(key_values)
        return self.dense(X), (enc_outputs, enc_valid_lens, tuple(new_caches))

    @property
    def attention_weights(self):
        """(self-attention (batch, num_layers, num_heads, steps, past + steps),
        encoder–decoder attention (batch, num_layers, num_heads, steps, src_steps)) of
        the last call, or None before the first call."""
        if self.blks[0].self_attention.attention_weights is None:
            return None
        return tuple(
            tf.stack([getattr(blk, name).attention_weights for blk in self.blks], axis=1)
            for name in ("self_attention", "cross_attention")
        )


__all__ = [
    "AddNorm",
    "PositionWiseFFN",
    "TransformerDecoder",
    "TransformerDecoderBlock",
    "TransformerEncoder",
    "TransformerEncoderBlock",
]  # the names d2lcore.tensorflow re-exports
