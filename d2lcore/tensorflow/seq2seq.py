"""Sequence to sequence learning in TensorFlow (the pages "Sequence-to-Sequence Toolkit" and
"Bahdanau Attention"): a GRU encoder, a GRU decoder without attention, one that attends to
the encoder's outputs, and the masked loss."""

import keras
import tensorflow as tf

from .attention import AdditiveAttention
from .encoder_decoder import AttentionDecoder, Decoder, Encoder
from .layers import Layer
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
        self.embedding = keras.layers.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)

    def call(self, X, *args):
        embs = self.embedding(X)
        outputs, state = self.rnn(embs)  # the initial state is zeros
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
        self.embedding = keras.layers.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)
        self.dense = keras.layers.Dense(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens=None):
        hidden = enc_outputs[1]  # the encoder's final state, (num_layers, batch, h)
        return hidden[-1], hidden  # c: the final state of its last layer, (batch, h)

    def call(self, X, state):
        context, hidden = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        # The GRU's input: [c, embedding of y_{t'-1}] at every step, (batch, steps, h + embed)
        contexts = tf.repeat(context[:, None, :], X.shape[1], axis=1)
        x = tf.concat((contexts, embs), axis=-1)
        outputs, hidden = self.rnn(x, hidden)  # (batch, steps, h)
        return self.dense(outputs), (context, hidden)


@checked
class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau et al. (2015)'s decoder: at step t', additive attention with the last GRU
    layer's previous state s_{t'-1} as query, over the encoder outputs h_1..h_T as keys
    and values, gives a context c_{t'}; [c_{t'}, embedding of y_{t'-1}] is the GRU's
    input.

    X (batch, steps >= 1) of token indices 0 ... vocab_size - 1; state: (enc_outputs
    (batch, src_steps, num_hiddens), hidden (num_layers, batch, num_hiddens),
    enc_valid_lens None or (batch,) lengths) -> (logits (batch, steps, vocab_size), new
    state). ``attention_weights``: (batch, steps, src_steps), the weights of every step of
    the last call."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = keras.layers.Embedding(vocab_size, embed_size)
        self.rnn = GRU(num_hiddens, num_layers, dropout)
        self.dense = keras.layers.Dense(vocab_size)
        self._attention_weights = ()

    def init_state(self, enc_outputs, enc_valid_lens):
        # outputs: (batch, src_steps, h), hidden: (num_layers, batch, h)
        outputs, hidden = enc_outputs
        return outputs, hidden, enc_valid_lens

    def call(self, X, state):
        enc_outputs, hidden, enc_valid_lens = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        outputs, attention_weights = [], []
        for t in range(X.shape[1]):
            query = hidden[-1][:, None, :]  # (batch, 1, h): s_{t'-1}, last layer
            # c_{t'}, (batch, 1, h): the keys and values are the encoder's outputs h_1..h_T
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            # The GRU's input: [c_{t'}, embedding of y_{t'-1}], (batch, 1, h + embed)
            x = tf.concat((context, embs[:, t : t + 1]), axis=-1)
            out, hidden = self.rnn(x, hidden)  # out: (batch, 1, h)
            outputs.append(out)
            attention_weights.append(self.attention.attention_weights)
        self._attention_weights = tuple(attention_weights)
        logits = self.dense(tf.concat(outputs, axis=1))  # (batch, steps, vocab_size)
        return logits, (enc_outputs, hidden, enc_valid_lens)

    @property
    def attention_weights(self):
        """(batch, steps, src_steps): the attention weights of every step of the last
        call; None before the first call."""
        if not self._attention_weights:  # no call yet
            return None
        return tf.concat(self._attention_weights, axis=1)


@checked
def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by
    ``value``, as a new tensor. valid_len: (batch,) lengths, whole numbers >= 0."""
    steps = tf.range(tf.shape(X)[1])
    keep = steps[None, :] < tf.cast(valid_len, steps.dtype)[:, None]  # (batch, steps)
    keep = tf.reshape(keep, tf.concat((tf.shape(keep), [1] * (X.shape.rank - 2)), 0))
    return tf.where(keep, X, tf.cast(value, X.dtype))


@checked
class MaskedSoftmaxCELoss(Layer):
    """Cross-entropy summed over the valid tokens of each sequence.

    pred (batch, steps, vocab) logits, label (batch, steps) indices 0 ... vocab - 1,
    valid_len (batch,) lengths -> (batch,): sum over t < valid_len[b] of
    -log softmax(pred[b, t])[label[b, t]]."""

    def __init__(self):
        super().__init__()

    def call(self, pred, label, valid_len):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.cast(label, tf.int32), logits=pred
        )  # (batch, steps)
        return tf.reduce_sum(sequence_mask(loss, valid_len), axis=1)


@checked
class LabelSmoothedCELoss(Layer):
    """Cross-entropy with label smoothing (Szegedy et al., 2016), summed over the valid
    tokens of each sequence as MaskedSoftmaxCELoss sums the plain one.

    A token with label y is given the target q = (1 - smoothing) one_hot(y) + smoothing / V
    over all V classes (padding included), so its loss is (1 - smoothing) (-log p_y) +
    smoothing * mean_k (-log p_k). pred (batch, steps, vocab) logits, label (batch, steps)
    indices, valid_len (batch,) -> (batch,): that loss summed over t < valid_len[b]."""

    def __init__(self, smoothing):
        super().__init__()
        self.smoothing = smoothing

    def call(self, pred, label, valid_len):
        log_p = tf.nn.log_softmax(pred, axis=-1)  # (batch, steps, vocab)
        # -log p_y: the label's entry of each row, (batch, steps)
        nll = -tf.gather(log_p, tf.cast(label, tf.int32), axis=-1, batch_dims=2)
        uniform = -tf.reduce_mean(log_p, axis=-1)  # cross-entropy with the uniform one
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return tf.reduce_sum(sequence_mask(loss, valid_len), axis=1)


__all__ = [
    "LabelSmoothedCELoss",
    "MaskedSoftmaxCELoss",
    "Seq2SeqAttentionDecoder",
    "Seq2SeqDecoder",
    "Seq2SeqEncoder",
    "sequence_mask",
]  # the names d2lcore.tensorflow re-exports
