"""Sequence to sequence learning with Bahdanau attention in MXNet (sections 4 and 5): a GRU
encoder, a GRU decoder that attends to the encoder's outputs, and the masked loss."""

import functools

from mxnet import npx
from mxnet.gluon import nn

from .attention import AdditiveAttention, AdditiveStep, prepare_keys
from .checks import checked
from .encoder_decoder import AttentionDecoder, Encoder
from .rnn import GRU


@checked
class Seq2SeqEncoder(Encoder):
    """Embedding, then a ``num_layers``-layer GRU with dropout between layers.

    X (batch, steps >= 1) of token indices 0 ... vocab_size - 1 -> (outputs (batch, steps,
    num_hiddens): the last layer's state at every step, state (num_layers, batch,
    num_hiddens): every layer's state after the last step)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)

    def forward(self, X, *args):
        outputs, state = self.rnn(self.embedding(X))  # the initial state is zeros
        return outputs, state


@checked
class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau et al. (2015)'s decoder: at step t', additive attention with the last GRU
    layer's previous state s_{t'-1} as query, over the encoder outputs h_1..h_T as keys
    and values, gives a context c_{t'}; [c_{t'}, embedding of y_{t'-1}] is the GRU's
    input. The steps run in AttentionGRUSteps, one cached graph per number of steps.

    ``init_state(enc_outputs, enc_valid_lens)``: enc_outputs the encoder's (outputs (batch,
    src_steps, num_hiddens), state (num_layers, batch, num_hiddens)), enc_valid_lens None or
    (batch,) lengths -> the state (enc_outputs (batch, src_steps, num_hiddens), hidden
    (num_layers, batch, num_hiddens), enc_valid_lens). ``forward(X (batch, steps >= 1) of
    token indices 0 ... vocab_size - 1, state)`` -> (logits (batch, steps, vocab_size), new
    state). ``attention_weights``: (batch, steps, src_steps), the weights of every step of
    the last call."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
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
        outputs, hidden = enc_outputs
        return outputs, hidden, enc_valid_lens

    def forward(self, X, state):
        enc_outputs, hidden, enc_valid_lens = state
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


@checked
def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by
    ``value``, as a new array. valid_len: (batch,) lengths, whole numbers >= 0 (the checks
    make a list of them an array)."""
    if X.size == 0:  # MXNet's kernel divides by zero on an empty batch
        return X.copy()
    return npx.sequence_mask(
        X, valid_len.astype(X.dtype), use_sequence_length=True, value=value, axis=1
    )


@checked
class MaskedSoftmaxCELoss(nn.Block):
    """Cross-entropy summed over the valid tokens of each sequence.

    pred (batch, steps, vocab) logits, label (batch, steps) indices 0 ... vocab - 1,
    valid_len (batch,) lengths -> (batch,): sum over t < valid_len[b] of
    -log softmax(pred[b, t])[label[b, t]]."""

    def __init__(self):
        super().__init__()

    def forward(self, pred, label, valid_len):
        # -log p(label): the label's entry of each log-softmax row, (batch, steps)
        loss = -npx.pick(npx.log_softmax(pred, axis=-1), label, axis=-1)
        return sequence_mask(loss, valid_len).sum(axis=1)
