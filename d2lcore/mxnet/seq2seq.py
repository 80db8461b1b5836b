"""Sequence to sequence learning with Bahdanau attention in MXNet (sections 4 and 5): a GRU
encoder, a GRU decoder that attends to the encoder's outputs, and the masked loss."""

from mxnet import np, npx
from mxnet.gluon import nn

from d2lcore.checks import (
    check_dropout,
    check_lengths,
    check_real,
    check_shapes,
    check_sizes,
    check_steps,
)

from .attention import AdditiveAttention, fix_keys
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
    input.

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
        self._attention_weights = []

    def init_state(self, enc_outputs, enc_valid_lens):
        # outputs: (batch, src_steps, h), hidden: (num_layers, batch, h)
        outputs, hidden = check_decoder_init(enc_outputs, enc_valid_lens)
        return outputs, hidden, enc_valid_lens

    def forward(self, X, state):
        check_decoder_call(X, state, self.vocab_size)
        enc_outputs, hidden, enc_valid_lens = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        # Keys and values: the encoder's outputs h_1..h_T, the same at every step, so W_k
        # is applied to the keys once, by fix_keys, not at every step
        attend = fix_keys(self.attention, enc_outputs, enc_outputs, enc_valid_lens)
        # The embedded tokens as (batch, 1, embed_size) slices, all split at once
        tokens = np.split(embs, embs.shape[1], axis=1) if embs.shape[1] > 1 else [embs]
        outputs, self._attention_weights = [], []
        for emb in tokens:
            query = np.expand_dims(hidden[-1], 1)  # (batch, 1, h): s_{t'-1}, last layer
            context, weights = attend(query)  # c_{t'}: (batch, 1, h)
            # The GRU's input: [c_{t'}, embedding of y_{t'-1}], (batch, 1, h + embed)
            x = np.concatenate((context, emb), axis=-1)
            out, hidden = self.rnn(x, hidden)  # out: (batch, 1, h)
            outputs.append(out)
            self._attention_weights.append(weights)
        logits = self.dense(np.concatenate(outputs, axis=1))  # (batch, steps, vocab_size)
        return logits, (enc_outputs, hidden, enc_valid_lens)

    @property
    def attention_weights(self):
        """(batch, steps, src_steps): the attention weights of every step of the last
        call."""
        return np.concatenate(self._attention_weights, axis=1)


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
