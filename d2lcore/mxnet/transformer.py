"""The Transformer in MXNet (The Transformer): position-wise FFN, add & norm, encoder and
decoder blocks, and the encoder and decoder built from them. Vaswani et al., 2017,
"Attention is all you need" (post-norm, as in the paper).

The encoder and decoder blocks are Gluon HybridBlocks: once hybridized (train_seq2seq
hybridizes the network), each call runs as one cached graph (Gluon's CachedOp) instead of
some hundred operations launched one by one from Python, which is most of the time MXNet
spends on models this small. Their forward builds what depends on Python values (the
cache), then runs the graph, written in hybrid_forward with the layers that the other
frameworks use (MultiHeadAttention is a HybridBlock too)."""

import math

from mxnet import np
from mxnet.gluon import nn

from d2lcore.transformer import LAYER_NORM_EPS

from .blocks import HybridBlock
from .encoder_decoder import AttentionDecoder, Encoder
from .multihead import MultiHeadAttention
from .positional import PositionalEncoding
from .tensors import checked


@checked
class PositionWiseFFN(nn.HybridBlock):
    """The same two-layer MLP at every position: dense2(relu(dense1(X))).

    X (..., d) -> (..., ffn_num_outputs); d is inferred on the first call. (The ReLU is
    dense1's activation.)"""

    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.Dense(ffn_num_hiddens, activation="relu", flatten=False)
        self.dense2 = nn.Dense(ffn_num_outputs, flatten=False)

    def forward(self, X):
        return super().forward(X)  # Gluon's: runs hybrid_forward

    def hybrid_forward(self, F, X):
        return self.dense2(self.dense1(X))


@checked
class AddNorm(nn.HybridBlock):
    """Residual connection, then layer normalisation: LayerNorm(dropout(Y) + X).

    X, Y (..., d), the same shape -> (..., d); d is inferred on the first call. LayerNorm
    normalises the last axis with epsilon LAYER_NORM_EPS (1e-5, the same in every
    framework) and learns a scale and a shift per feature."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(axis=-1, epsilon=LAYER_NORM_EPS)

    def forward(self, X, Y):
        return super().forward(X, Y)  # Gluon's: runs hybrid_forward

    def hybrid_forward(self, F, X, Y):
        return self.ln(self.dropout(Y) + X)


@checked
class TransformerEncoderBlock(HybridBlock):
    """Multi-head self-attention, then the position-wise FFN, each followed by AddNorm:
    X (batch, steps, num_hiddens), valid_lens None, (batch,) or (batch, steps) -> (batch,
    steps, num_hiddens). hybrid_forward is the graph, once hybridized."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(dropout)

    def forward(self, X, valid_lens=None):
        # The lengths that the graph's attention reads, (batch, steps) int32
        valid_lens = self.attention.query_lengths(X, X, valid_lens)
        Y, self.attention.head_weights = super().forward(X, valid_lens)
        return Y

    def hybrid_forward(self, F, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y)), self.attention.head_weights


@checked
class TransformerEncoder(Encoder):
    """Token embeddings times sqrt(num_hiddens), plus positional encodings, then
    ``num_layers`` encoder blocks.

    X (batch, steps) token indices 0 ... vocab_size - 1, steps <= max_len; valid_lens None,
    (batch,) or (batch, steps) -> (batch, steps, num_hiddens). ``attention_weights``: the
    last call's self-attention weights, (batch, num_layers, num_heads, steps, steps)."""

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
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = nn.HybridSequential()  # named 0, ..., num_layers - 1
        for _ in range(num_layers):
            self.blks.add(
                self.block_class(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias
                )
            )

    def forward(self, X, valid_lens=None):
        # The embeddings are scaled up to the size of the encodings (which lie in [-1, 1])
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for blk in self.blks:
            X = blk(X, valid_lens)
        return X

    @property
    def attention_weights(self):
        """(batch, num_layers, num_heads, queries, keys), or None before the first call."""
        weights = [blk.attention.attention_weights for blk in self.blks]
        return None if weights[0] is None else np.stack(weights, axis=1)


@checked
class TransformerDecoderBlock(HybridBlock):
    """Causal self-attention, encoder–decoder attention, then the position-wise FFN, each
    followed by AddNorm.

    X (batch, steps, num_hiddens): the block's inputs at positions past, ...,
    past + steps - 1; enc_outputs (batch, src_steps, num_hiddens); enc_valid_lens None or
    (batch,); cache None or (batch, past, num_hiddens): the block's inputs at the earlier
    positions 0, ..., past - 1. Returns (output (batch, steps, num_hiddens), key_values
    (batch, past + steps, num_hiddens): the cache for the next call).

    Position past + i attends to positions 0, ..., past + i only, whatever the mode
    (training or not), so decoding a sequence step by step with the cache gives the same
    outputs as decoding it at once. forward gives the cache and both attentions' lengths
    to hybrid_forward, the graph once hybridized."""

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

    def forward(self, X, enc_outputs, enc_valid_lens=None, cache=None):
        batch, steps = X.shape[:2]
        # The keys and values of the self-attention: positions 0, ..., past + steps - 1
        key_values = X if cache is None else np.concatenate((cache, X), axis=1)
        past = key_values.shape[1] - steps
        # Causal mask: query i (position past + i) sees the first past + i + 1 keys
        lens = np.arange(past + 1, past + steps + 1, dtype="int32", ctx=X.ctx)
        dec_valid_lens = np.broadcast_to(lens, (batch, steps))  # (batch, steps)
        # The lengths that the graph's encoder–decoder attention reads, (batch, steps) int32
        enc_valid_lens = self.cross_attention.query_lengths(
            X, enc_outputs, enc_valid_lens
        )
        Y, self.self_attention.head_weights, self.cross_attention.head_weights = (
            super().forward(X, key_values, enc_outputs, dec_valid_lens, enc_valid_lens)
        )
        return Y, key_values

    def hybrid_forward(self, F, X, key_values, enc_outputs, dec_lens, enc_lens):
        Y = self.addnorm1(X, self.self_attention(X, key_values, key_values, dec_lens))
        Z = self.addnorm2(Y, self.cross_attention(Y, enc_outputs, enc_outputs, enc_lens))
        # The weights of both attentions (symbols in the graph) are outputs of the graph too
        weights = self.self_attention.head_weights, self.cross_attention.head_weights
        return self.addnorm3(Z, self.ffn(Z)), *weights


@checked
class TransformerDecoder(AttentionDecoder):
    """Token embeddings times sqrt(num_hiddens), plus the positional encodings of their
    real positions, then ``num_layers`` decoder blocks and a dense layer to vocab_size.

    State: (enc_outputs (batch, src_steps, num_hiddens), enc_valid_lens None or (batch,),
    caches: a tuple of num_layers entries, all None (nothing decoded yet) or all (batch,
    past, num_hiddens)), as ``init_state(enc_outputs, enc_valid_lens)`` makes it.
    ``forward(X (batch, steps) token indices 0 ... vocab_size - 1, state)`` -> (logits
    (batch, steps, vocab_size), new state) whose caches hold every position decoded so far
    (at most max_len): call it again with the next tokens to decode step by step.
    ``attention_weights``: the last call's (self-attention (batch, num_layers, num_heads,
    steps, past + steps), encoder–decoder attention (batch, num_layers, num_heads, steps,
    src_steps))."""

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
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = nn.HybridSequential()
        for _ in range(num_layers):
            self.blks.add(
                self.block_class(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias
                )
            )
        self.dense = nn.Dense(vocab_size, flatten=False)

    def init_state(self, enc_outputs, enc_valid_lens=None):
        return enc_outputs, enc_valid_lens, (None,) * self.num_layers

    def forward(self, X, state):
        enc_outputs, enc_valid_lens, caches = state
        past = 0 if caches[0] is None else caches[0].shape[1]  # positions decoded so far
        # Position past + i for the i-th token: the cache holds positions 0 ... past - 1
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens), past)
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
            np.stack([getattr(blk, name).attention_weights for blk in self.blks], axis=1)
            for name in ("self_attention", "cross_attention")
        )


__all__ = [
    "AddNorm",
    "PositionWiseFFN",
    "TransformerDecoder",
    "TransformerDecoderBlock",
    "TransformerEncoder",
    "TransformerEncoderBlock",
]  # the names d2lcore.mxnet re-exports
