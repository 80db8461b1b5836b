"""Sequence to sequence learning with Bahdanau attention in MXNet (sections 4 and 5): a GRU
encoder, a GRU decoder that attends to the encoder's outputs, and the masked loss."""

import functools

from mxnet import np, npx
from mxnet.gluon import nn

from d2lcore.checks import (
    check_built_widths,
    check_dropout,
    check_lengths,
    check_real,
    check_shapes,
    check_sizes,
    check_steps,
)

from .attention import AdditiveAttention, AdditiveStep, prepare_keys
from .checks import check_decoder_call, check_decoder_init, check_float, check_token_ids
from .encoder_decoder import AttentionDecoder, Encoder
from .rnn import GRU


class Seq2SeqEncoder(Encoder):
    """Embedding, then a ``num_layers``-layer GRU with dropout between layers.

    X (batch, steps) of token indices -> (outputs (batch, steps, num_hiddens): the last
    layer's state at every step, state (num_layers, batch, num_hiddens): every layer's
    state after the last step)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        check_sizes(vocab_size=vocab_size, embed_size=embed_size)
        check_sizes(num_hiddens=num_hiddens, num_layers=num_layers)
        self.vocab_size, dropout = vocab_size, check_dropout(dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)

    def forward(self, X, *args):
        check_steps("X", check_shapes(X=(X, "batch steps")).get("steps"))
        check_token_ids("X", X, self.vocab_size)
        outputs, state = self.rnn(self.embedding(X))  # the initial state is zeros
        return outputs, state


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau et al. (2015)'s decoder: at step t', additive attention with the last GRU
    layer's previous state s_{t'-1} as query, over the encoder outputs h_1..h_T as keys
    and values, gives a context c_{t'}; [c_{t'}, embedding of y_{t'-1}] is the GRU's
    input. The steps run in AttentionGRUSteps, one cached graph per number of steps.

    State: (enc_outputs (batch, src_steps, num_hiddens), hidden (num_layers, batch,
    num_hiddens), enc_valid_lens (batch,) or None). ``attention_weights``: (batch, steps,
    src_steps), the weights of every step of the last call."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        check_sizes(vocab_size=vocab_size, embed_size=embed_size)
        check_sizes(num_hiddens=num_hiddens, num_layers=num_layers)
        self.vocab_size, dropout = vocab_size, check_dropout(dropout)
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)
        self.dense = nn.Dense(vocab_size, flatten=False)
        self._attention_weights = None
        # The graph of the steps for a number of steps, made at its first use and kept
        # (not a child block: its layers are the decoder's)
        self._steps = functools.cache(
            functools.partial(AttentionGRUSteps, self.attention, self.rnn)
        )

    def init_state(self, enc_outputs, enc_valid_lens):
        # outputs: (batch, src_steps, h), hidden: (num_layers, batch, h)
        outputs, hidden = check_decoder_init(enc_outputs, enc_valid_lens)
        return outputs, hidden, enc_valid_lens

    def forward(self, X, state):
        check_decoder_call(X, state, self.vocab_size)
        enc_outputs, hidden, enc_valid_lens = state
        check_float(enc_outputs=enc_outputs)
        check_built_widths(self.attention, keys=enc_outputs)
        embs = self.embedding(X)  # (batch, steps, embed_size)
        # Keys and values: the encoder's outputs h_1..h_T, the same at every step, so W_k
        # is applied to the keys once, by prepare_keys, not at every step
        keys, lens, ones = prepare_keys(self.attention, enc_outputs, enc_valid_lens)
        outputs, hidden, self._attention_weights = self._steps(X.shape[1])(
            embs, hidden, keys, enc_outputs, lens, ones
        )
        logits = self.dense(outputs)  # (batch, steps, vocab_size)
        return logits, (enc_outputs, hidden, enc_valid_lens)

    @property
    def attention_weights(self):
        """(batch, steps, src_steps): the attention weights of every step of the last
        call; None before the first call."""
        return self._attention_weights


class AttentionGRUSteps(nn.HybridBlock):
    """The steps of Seq2SeqAttentionDecoder, with its own layers: for each embedded token,
    one step of additive attention (AdditiveStep) with the last GRU layer's state as query
    gives a context, and [context, embedding] is the GRU's input.

    embs (batch, steps, embed_size), hidden (num_layers, batch, h), keys (batch, src_steps,
    h), values (batch, src_steps, h), lens (batch, 1), ones (batch, src_steps, 1) (keys,
    lens and ones: prepare_keys' arrays) -> (outputs (batch, steps, h), hidden (num_layers,
    batch, h), weights (batch, steps, src_steps)).

    Hybridized: the loop of hybrid_forward runs once, when MXNet traces it into a graph
    (hence one instance per number of steps); every call then runs the whole graph,
    forward and backward, instead of launching a dozen operations per step from Python."""

    def __init__(self, attention, rnn, steps):
        super().__init__()
        self.attend, self.rnn, self.steps = AdditiveStep(attention), rnn, steps
        # Not hybridize(static_alloc=True): with it, MXNet 1.9.1 gets the gradient of
        # the GRU's weights wrong when the graph calls the GRU more than once
        self.hybridize()

    def hybrid_forward(self, F, embs, hidden, keys, values, lens, ones):
        tokens = F.np.split(embs, self.steps, axis=1) if self.steps > 1 else [embs]
        outputs, weights = [], []
        for emb in tokens:  # emb: (batch, 1, embed_size), the embedding of y_{t'-1}
            # The query s_{t'-1}: the last layer's state, (batch, 1, h)
            query = F.np.swapaxes(hidden[-1:], 0, 1)
            context, alpha = self.attend(query, keys, values, lens, ones)  # c_{t'}
            # The GRU's input: [c_{t'}, embedding of y_{t'-1}], (batch, 1, h + embed)
            x = F.np.concatenate((context, emb), axis=-1)
            out, hidden = self.rnn(x, hidden)  # out: (batch, 1, h)
            outputs.append(out)
            weights.append(alpha)
        cat = F.np.concatenate
        return cat(outputs, axis=1), hidden, cat(weights, axis=1)


def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by
    ``value``, as a new array. valid_len: (batch,)."""
    if not isinstance(X, np.ndarray):
        raise TypeError(f"X must be an mxnet.np.ndarray; got {type(X).__name__}")
    if X.ndim < 2:
        raise ValueError(f"X must have shape (batch, steps, ...); got {X.shape}")
    check_real("value", value, finite=False)
    if not isinstance(valid_len, np.ndarray):
        valid_len = np.array(valid_len, ctx=X.ctx)
    # MXNet's kernel crashes the process on a negative length: check before it runs
    check_lengths("valid_len", valid_len.asnumpy())
    if valid_len.shape != (X.shape[0],):
        raise ValueError(
            f"valid_len must have shape (batch,) = ({X.shape[0]},) for X of shape "
            f"{X.shape}; got {valid_len.shape}"
        )
    if X.size == 0:  # MXNet's kernel divides by zero on an empty batch
        return X.copy()
    return npx.sequence_mask(
        X, valid_len.astype(X.dtype), use_sequence_length=True, value=value, axis=1
    )


class MaskedSoftmaxCELoss(nn.Block):
    """Cross-entropy summed over the valid tokens of each sequence.

    pred (batch, steps, vocab) logits, label (batch, steps) indices, valid_len (batch,) ->
    (batch,): sum over t < valid_len[b] of -log softmax(pred[b, t])[label[b, t]]."""

    def __init__(self):
        super().__init__()

    def forward(self, pred, label, valid_len):
        check_shapes(
            pred=(pred, "batch steps vocab"),
            label=(label, "batch steps"),
            valid_len=(valid_len, "batch"),
        )
        check_float(pred=pred)
        check_token_ids("label", label, pred.shape[-1])
        # -log p(label): the label's entry of each log-softmax row, (batch, steps)
        loss = -npx.pick(npx.log_softmax(pred, axis=-1), label, axis=-1)
        return sequence_mask(loss, valid_len).sum(axis=1)
