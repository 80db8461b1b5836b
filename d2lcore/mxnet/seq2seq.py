"""Sequence to sequence learning in MXNet (the pages "Sequence-to-Sequence Toolkit" and
"Bahdanau Attention"): a GRU encoder, a GRU decoder without attention, one that attends to
the encoder's outputs, and the masked loss."""

from mxnet import np, npx
from mxnet.gluon import nn, rnn

from .attention import AdditiveAttention
from .encoder_decoder import AttentionDecoder, Decoder, Encoder
from .rnn import GRU
from .tensors import checked


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
class Seq2SeqDecoder(Decoder):
    """The decoder without attention (Cho et al., 2014): the context c, the final state of
    the encoder's last layer, enters the GRU beside the previous token's embedding at every
    step. init_state: the encoder's (outputs, state (num_layers, batch, num_hiddens)) ->
    (c (batch, num_hiddens), that state). X (batch, steps) token indices, state ->
    (logits (batch, steps, vocab_size), new state)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)
        self.dense = nn.Dense(vocab_size, flatten=False)

    def init_state(self, enc_outputs, enc_valid_lens=None):
        hidden = enc_outputs[1]  # the encoder's final state, (num_layers, batch, h)
        return hidden[-1], hidden  # c: the final state of its last layer, (batch, h)

    def forward(self, X, state):
        context, hidden = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        # The GRU's input: [c, embedding of y_{t'-1}] at every step, (batch, steps, h + embed)
        contexts = np.repeat(np.expand_dims(context, 1), X.shape[1], axis=1)
        outputs, hidden = self.rnn(np.concatenate((contexts, embs), axis=-1), hidden)
        return self.dense(outputs), (context, hidden)  # outputs: (batch, steps, h)


@checked
class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau et al. (2015)'s decoder: at step t', additive attention with the last GRU
    layer's previous state s_{t'-1} as query, over the encoder outputs h_1..h_T as keys
    and values, gives a context c_{t'}; [c_{t'}, embedding of y_{t'-1}] is the GRU's
    input.

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
        # Gluon's GRU, batch-major (layout "NTC"); its state is a list of one array
        self.rnn = rnn.GRU(num_hiddens, num_layers, dropout=dropout, layout="NTC")
        self.dense = nn.Dense(vocab_size, flatten=False)
        self._attention_weights = []

    def init_state(self, enc_outputs, enc_valid_lens):
        # outputs: (batch, src_steps, h), hidden: (num_layers, batch, h)
        outputs, hidden = enc_outputs
        return outputs, hidden, enc_valid_lens

    def forward(self, X, state):
        enc_outputs, hidden, enc_valid_lens = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        outputs, self._attention_weights = [], []
        for t in range(X.shape[1]):  # embs[:, t:t + 1]: the embedding of y_{t'-1}
            query = np.expand_dims(hidden[-1], 1)  # (batch, 1, h): s_{t'-1}, last layer
            # c_{t'}: (batch, 1, h); the keys and values are the encoder's outputs
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            # The GRU's input: [c_{t'}, embedding of y_{t'-1}], (batch, 1, h + embed)
            x = np.concatenate((context, embs[:, t : t + 1]), axis=-1)
            out, [hidden] = self.rnn(x, [hidden])  # out: (batch, 1, h)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        logits = self.dense(np.concatenate(outputs, axis=1))  # (batch, steps, vocab)
        return logits, (enc_outputs, hidden, enc_valid_lens)

    @property
    def attention_weights(self):
        """(batch, steps, src_steps): the attention weights of every step of the last
        call; None before the first call."""
        if not self._attention_weights:  # no call yet
            return None
        return np.concatenate(self._attention_weights, axis=1)


@checked
def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by
    ``value``, as a new array. valid_len: (batch,) lengths, whole numbers >= 0."""
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


@checked
class LabelSmoothedCELoss(nn.Block):
    """Cross-entropy with label smoothing (Szegedy et al., 2016), summed over the valid
    tokens of each sequence as MaskedSoftmaxCELoss sums the plain one.

    A token with label y is given the target q = (1 - smoothing) one_hot(y) + smoothing / V
    over all V classes (padding included), so its loss is (1 - smoothing) (-log p_y) +
    smoothing * mean_k (-log p_k). pred (batch, steps, vocab) logits, label (batch, steps)
    indices, valid_len (batch,) -> (batch,): that loss summed over t < valid_len[b]."""

    def __init__(self, smoothing):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, pred, label, valid_len):
        log_p = npx.log_softmax(pred, axis=-1)  # (batch, steps, vocab)
        nll = -npx.pick(log_p, label, axis=-1)  # -log p_y, (batch, steps)
        uniform = -log_p.mean(axis=-1)  # cross-entropy with the uniform distribution
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return sequence_mask(loss, valid_len).sum(axis=1)


__all__ = [
    "LabelSmoothedCELoss",
    "MaskedSoftmaxCELoss",
    "Seq2SeqAttentionDecoder",
    "Seq2SeqDecoder",
    "Seq2SeqEncoder",
    "sequence_mask",
]  # the names d2lcore.mxnet re-exports
