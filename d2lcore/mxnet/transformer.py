"""The Transformer in MXNet (section 7): position-wise FFN, add & norm, encoder and
decoder blocks, and the encoder and decoder built from them. Vaswani et al., 2017,
"Attention is all you need" (post-norm, as in the paper).

The encoder and decoder blocks are HybridBlocks, hybridized when they are built: each
call runs as one cached graph (Gluon's CachedOp) instead of some hundred operations
launched one by one from Python, which is most of the time MXNet spends on models this
small. Their forward checks the inputs and builds what depends on Python values (the
cache, the lengths), then runs the graph, written in hybrid_forward."""

import math

from mxnet import np
from mxnet.gluon import nn

from d2lcore.checks import (
    check_heads,
    check_int,
    check_lengths,
    check_shapes,
    valid_lens_spec,
)
from d2lcore.transformer import LAYER_NORM_EPS, check_decoder_state, check_width

from .encoder_decoder import AttentionDecoder, Encoder
from .multihead import MultiHeadAttention
from .positional import PositionalEncoding


class _HybridAttention(MultiHeadAttention, nn.HybridBlock):
    """A MultiHeadAttention that a HybridBlock may hold (Gluon wants a HybridBlock's
    sublayers to be HybridBlocks): the same layer, weights and forward, which stays
    imperative. The blocks below compute it in their graphs with _attend."""

    def register_child(self, block, name=None):
        # Its DotProductAttention is a plain Block, which HybridBlock would refuse. The
        # graphs use only that block's dropout, a HybridBlock.
        nn.Block.register_child(self, block, name)


def _attend(F, mha, num_hiddens, queries, keys, values, lens=None):
    """What ``mha`` (a MultiHeadAttention of num_hiddens features) computes, written for a
    HybridBlock's graph (``F`` is mxnet.symbol, or mxnet.ndarray when not hybridized),
    where shapes are unknown. Nothing is checked: the caller knows its lengths are valid.

    queries (batch, n_q, d_q), keys (batch, n_k, d_k), values (batch, n_k, d_v); lens
    (batch,) or (batch, n_q): the valid lengths, as mha(queries, keys, values, lens)
    takes them, or None for the causal mask: query i (at position past + i, where
    past = n_k - n_q) sees the keys at positions 0, ..., past + i. Returns (output
    (batch, n_q, num_hiddens), weights (batch * num_heads, n_q, n_k): the attention
    weights, before dropout)."""
    heads = mha.num_heads

    def split(X):  # as transpose_qkv: (batch, n, num_hiddens) -> (batch * heads, n, d)
        X = F.npx.reshape(X, (-2, -2, heads, -1))  # (batch, n, heads, d)
        return F.npx.reshape(F.np.transpose(X, (0, 2, 1, 3)), (-5, -2, -2))

    queries_h = split(mha.W_q(queries))
    keys_h, values_h = split(mha.W_k(keys)), split(mha.W_v(values))
    d = num_hiddens // heads
    scores = F.npx.batch_dot(queries_h, keys_h, transpose_b=True) / math.sqrt(d)
    # The number of keys each query sees, (batch * heads, n_q), for MXNet's softmax with
    # lengths: the same weights as masked_softmax, in one operation (0 beyond a query's
    # length, a row of 0 for length 0; a length must not exceed n_k). Built from ranges
    # over the axes (arange_like), without a pass over anything as large as the scores.
    num_keys = F.np.max(F.npx.arange_like(keys, axis=1)) + 1  # n_k
    positions = F.npx.arange_like(queries, axis=1)  # 0, ..., n_q - 1
    if lens is None:  # n_k - (n_q - 1 - i) = past + i + 1 for query i, in every row
        rows = F.npx.arange_like(queries_h, axis=0)  # one per example and head
        lens = F.np.expand_dims(rows * 0, -1) + (num_keys - F.np.flip(positions, 0))
    else:  # each example's lengths for its heads, as MultiHeadAttention; at most n_k
        lens = F.npx.reshape(lens.astype("float32"), (-2, -1))  # (batch, 1 or n_q)
        lens = F.np.minimum(F.np.repeat(lens, heads, axis=0), num_keys) + positions * 0
    weights = F.npx.softmax(scores, lens.astype("int32"), axis=-1, use_length=True)
    output = F.npx.batch_dot(mha.attention.dropout(weights), values_h)  # (b * h, n_q, d)
    # As transpose_output: (batch * heads, n_q, d) -> (batch, n_q, heads * d)
    output = F.npx.reshape(output, (-6, -1, heads, -2, -2))  # (batch, heads, n_q, d)
    output = F.npx.reshape(F.np.transpose(output, (0, 2, 1, 3)), (-2, -2, -5))
    return mha.W_o(output), weights


class PositionWiseFFN(nn.HybridBlock):
    """The same two-layer MLP at every position: dense2(relu(dense1(X))).

    X (..., d) -> (..., ffn_num_outputs); d is inferred on the first call. (The ReLU is
    dense1's activation.)"""

    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        check_int("ffn_num_hiddens", ffn_num_hiddens, minimum=1)
        check_int("ffn_num_outputs", ffn_num_outputs, minimum=1)
        self.dense1 = nn.Dense(ffn_num_hiddens, activation="relu", flatten=False)
        self.dense2 = nn.Dense(ffn_num_outputs, flatten=False)

    def forward(self, X):
        return super().forward(X)

    def hybrid_forward(self, F, X):
        return self.dense2(self.dense1(X))


class AddNorm(nn.HybridBlock):
    """Residual connection, then layer normalisation: LayerNorm(dropout(Y) + X).

    X, Y (..., d) -> (..., d). LayerNorm normalises the last axis with epsilon
    LAYER_NORM_EPS (1e-5, the same in every framework) and learns a scale and a shift per
    feature."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(axis=-1, epsilon=LAYER_NORM_EPS)

    def forward(self, X, Y):
        # In a hybridized parent's graph X and Y are symbols, whose shapes are unknown
        if isinstance(X, np.ndarray) and X.shape != Y.shape:
            raise ValueError(
                "AddNorm adds X and Y, so they must have the same shape; got X "
                f"{tuple(X.shape)} and Y {tuple(Y.shape)}"
            )
        return super().forward(X, Y)

    def hybrid_forward(self, F, X, Y):
        return self.ln(self.dropout(Y) + X)


def _key_lens(valid_lens, queries, num_keys):
    """Checked valid lengths for the graph of a block: valid_lens None, (batch,) or
    (batch, n_q), for queries (batch, n_q, d), as an array; None becomes num_keys for
    every example (every key)."""
    if valid_lens is None:
        return np.full((queries.shape[0],), num_keys, ctx=queries.ctx)
    if not isinstance(valid_lens, np.ndarray):
        valid_lens = np.array(valid_lens, ctx=queries.ctx)
    spec = valid_lens_spec(valid_lens, "n_q")
    check_shapes(queries=(queries, "batch n_q d"), valid_lens=(valid_lens, spec))
    check_lengths("valid_lens", valid_lens.asnumpy())
    return valid_lens


class TransformerEncoderBlock(nn.HybridBlock):
    """Multi-head self-attention, then the position-wise FFN, each followed by AddNorm.

    X (batch, steps, num_hiddens), valid_lens None, (batch,) or (batch, steps) ->
    (batch, steps, num_hiddens). The residual connections need X's last axis to be
    num_hiddens. Hybridized when built (see the module's docstring)."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        self.attention = _HybridAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(dropout)
        self.hybridize(static_alloc=True)

    def __call__(self, X, valid_lens=None):
        # Gluon's Block.__call__ takes positional arguments only: allow valid_lens=...
        return super().__call__(X, valid_lens)

    def forward(self, X, valid_lens=None):
        check_width("X", X.shape, self.num_hiddens)
        lens = _key_lens(valid_lens, X, X.shape[1])
        Y, weights = super().forward(X, lens)
        self.attention.attention.attention_weights = weights  # (batch * heads, q, k)
        return Y

    def hybrid_forward(self, F, X, lens):
        # X: (batch, steps, num_hiddens), lens: (batch,) or (batch, steps)
        attended, weights = _attend(F, self.attention, self.num_hiddens, X, X, X, lens)
        Y = self.addnorm1(X, attended)
        return self.addnorm2(Y, self.ffn(Y)), weights


class TransformerEncoder(Encoder):
    """Token embeddings times sqrt(num_hiddens), plus positional encodings, then
    ``num_layers`` encoder blocks.

    X (batch, steps) token indices, valid_lens None or (batch,) ->
    (batch, steps, num_hiddens). ``attention_weights``: the last call's self-attention
    weights, (batch, num_layers, num_heads, steps, steps)."""

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
        check_int("vocab_size", vocab_size, minimum=1)
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        check_heads(num_hiddens, num_heads)
        check_int("num_layers", num_layers, minimum=1)
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = nn.HybridSequential()  # named 0, ..., num_layers - 1
        for _ in range(num_layers):
            self.blks.add(
                TransformerEncoderBlock(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias
                )
            )

    def __call__(self, X, valid_lens=None):
        # Gluon's Block.__call__ takes positional arguments only: allow valid_lens=...
        return super().__call__(X, valid_lens)

    def forward(self, X, valid_lens=None):
        check_shapes(X=(X, "batch steps"))
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


class TransformerDecoderBlock(nn.HybridBlock):
    """Causal self-attention, encoder–decoder attention, then the position-wise FFN, each
    followed by AddNorm.

    X (batch, steps, num_hiddens): the block's inputs at positions past, ...,
    past + steps - 1; enc_outputs (batch, src_steps, num_hiddens); enc_valid_lens None or
    (batch,); cache None or (batch, past, num_hiddens): the block's inputs at the earlier
    positions 0, ..., past - 1. Returns (output (batch, steps, num_hiddens), key_values
    (batch, past + steps, num_hiddens): the cache for the next call).

    Position past + i attends to positions 0, ..., past + i only, whatever the mode
    (training or not), so decoding a sequence step by step with the cache gives the same
    outputs as decoding it at once. Hybridized when built (see the module's
    docstring)."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        self.self_attention = _HybridAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(dropout)
        self.cross_attention = _HybridAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm2 = AddNorm(dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(dropout)
        self.hybridize(static_alloc=True)

    def __call__(self, X, enc_outputs, enc_valid_lens=None, cache=None):
        # Gluon's Block.__call__ takes positional arguments only: allow cache=...
        return super().__call__(X, enc_outputs, enc_valid_lens, cache)

    def forward(self, X, enc_outputs, enc_valid_lens=None, cache=None):
        batch = check_width("X", X.shape, self.num_hiddens)[0]
        src_steps = check_width(
            "enc_outputs", enc_outputs.shape, self.num_hiddens, batch
        )[1]
        if cache is None:
            key_values = X
        else:
            check_width("cache", cache.shape, self.num_hiddens, batch)
            key_values = np.concatenate((cache, X), axis=1)
        enc_lens = _key_lens(enc_valid_lens, X, src_steps)
        Y, self_weights, cross_weights = super().forward(
            X, key_values, enc_outputs, enc_lens
        )
        self.self_attention.attention.attention_weights = self_weights
        self.cross_attention.attention.attention_weights = cross_weights
        return Y, key_values

    def hybrid_forward(self, F, X, key_values, enc_outputs, enc_lens):
        # No lengths: the causal mask, query i (position past + i) sees past + i + 1 keys
        attended, self_weights = _attend(
            F, self.self_attention, self.num_hiddens, X, key_values, key_values
        )
        Y = self.addnorm1(X, attended)
        attended, cross_weights = _attend(
            F,
            self.cross_attention,
            self.num_hiddens,
            Y,
            enc_outputs,
            enc_outputs,
            enc_lens,
        )
        Z = self.addnorm2(Y, attended)
        return self.addnorm3(Z, self.ffn(Z)), self_weights, cross_weights


class TransformerDecoder(AttentionDecoder):
    """Token embeddings times sqrt(num_hiddens), plus the positional encodings of their
    real positions, then ``num_layers`` decoder blocks and a dense layer to vocab_size.

    State: (enc_outputs (batch, src_steps, num_hiddens), enc_valid_lens None or (batch,),
    caches: a tuple of num_layers entries, each None or (batch, past, num_hiddens)).
    ``forward(X (batch, steps), state)`` -> (logits (batch, steps, vocab_size), new state)
    whose caches hold every position decoded so far: call it again with the next tokens
    to decode step by step. ``attention_weights``: the last call's (self-attention
    (batch, num_layers, num_heads, steps, past + steps), encoder–decoder attention
    (batch, num_layers, num_heads, steps, src_steps))."""

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
        check_int("vocab_size", vocab_size, minimum=1)
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        check_heads(num_hiddens, num_heads)
        self.num_layers = check_int("num_layers", num_layers, minimum=1)
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = nn.HybridSequential()
        for _ in range(num_layers):
            self.blks.add(
                TransformerDecoderBlock(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias
                )
            )
        self.dense = nn.Dense(vocab_size, flatten=False)

    def init_state(self, enc_outputs, enc_valid_lens=None):
        state = (enc_outputs, enc_valid_lens, (None,) * self.num_layers)
        check_decoder_state(state, self.num_layers, self.num_hiddens)
        return state

    def forward(self, X, state):
        check_shapes(X=(X, "batch steps"))
        past = check_decoder_state(state, self.num_layers, self.num_hiddens, X.shape[0])
        enc_outputs, enc_valid_lens, caches = state
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
