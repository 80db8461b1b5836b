"""Sequence to sequence learning in PyTorch (the pages "Sequence-to-Sequence Toolkit" and
"Bahdanau Attention"): a GRU encoder, a GRU decoder without attention, one that attends to
the encoder's outputs, and the masked loss."""

import torch
from torch import nn
from torch.nn import functional as F

from .attention import AdditiveAttention
from .encoder_decoder import AttentionDecoder, Decoder, Encoder
from .tensors import checked


@checked
class Seq2SeqEncoder(Encoder):
    """Embedding, then a ``num_layers``-layer GRU with dropout between layers.

    X (batch, steps) of token indices -> (outputs (batch, steps, num_hiddens): the last
    layer's state at every step, state (num_layers, batch, num_hiddens): every layer's
    state after the last step)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size, num_hiddens, num_layers, dropout=dropout, batch_first=True
        )

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
        self.rnn = nn.GRU(
            num_hiddens + embed_size,
            num_hiddens,
            num_layers,
            dropout=dropout,
            batch_first=True,
        )
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens=None):
        hidden = enc_outputs[1]  # the encoder's final state, (num_layers, batch, h)
        return hidden[-1], hidden  # c: the final state of its last layer, (batch, h)

    def forward(self, X, state):
        context, hidden = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        # The GRU's input: [c, embedding of y_{t'-1}] at every step, (batch, steps, h + embed)
        contexts = context.unsqueeze(1).expand(-1, X.shape[1], -1)
        outputs, hidden = self.rnn(torch.cat((contexts, embs), dim=-1), hidden)
        return self.dense(outputs), (context, hidden)  # outputs: (batch, steps, h)


@checked
class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau et al. (2015)'s decoder: at step t', additive attention with the last GRU
    layer's previous state s_{t'-1} as query, over the encoder outputs h_1..h_T as keys
    and values, gives a context c_{t'}; [c_{t'}, embedding of y_{t'-1}] is the GRU's
    input.

    ``init_state((outputs, state), enc_valid_lens)``: the encoder's outputs and (batch,)
    lengths or None -> the decoder's state (enc_outputs (batch, src_steps, num_hiddens),
    hidden (num_layers, batch, num_hiddens), enc_valid_lens). ``forward(X (batch, steps)
    token indices, state)`` -> (logits (batch, steps, vocab_size), new state).
    ``attention_weights``: (batch, steps, src_steps), the weights of every step of the
    last call."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens,
            num_hiddens,
            num_layers,
            dropout=dropout,
            batch_first=True,
        )
        self.dense = nn.Linear(num_hiddens, vocab_size)
        self._attention_weights = []

    def init_state(self, enc_outputs, enc_valid_lens):
        # outputs: (batch, src_steps, h), hidden: (num_layers, batch, h)
        outputs, hidden = enc_outputs
        return outputs, hidden, enc_valid_lens

    def forward(self, X, state):
        enc_outputs, hidden, enc_valid_lens = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        outputs, self._attention_weights = [], []
        for emb in embs.split(1, dim=1):  # emb: (batch, 1, embed), that of y_{t'-1}
            query = hidden[-1].unsqueeze(1)  # (batch, 1, h): s_{t'-1}, last layer
            # c_{t'}: (batch, 1, h), with the encoder's outputs h_1..h_T as keys and values
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            # The GRU's input: [c_{t'}, embedding of y_{t'-1}], (batch, 1, h + embed)
            x = torch.cat((context, emb), dim=-1)
            out, hidden = self.rnn(x, hidden)  # out: (batch, 1, h)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        logits = self.dense(torch.cat(outputs, dim=1))  # (batch, steps, vocab_size)
        return logits, (enc_outputs, hidden, enc_valid_lens)

    @property
    def attention_weights(self):
        """(batch, steps, src_steps): the attention weights of every step of the last
        call; None before the first call."""
        if not self._attention_weights:  # no call yet
            return None
        return torch.cat(self._attention_weights, dim=1)


@checked
def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by
    ``value``, as a new tensor. valid_len: (batch,)."""
    keep = torch.arange(X.shape[1], device=X.device) < valid_len.reshape(-1, 1)
    keep = keep.reshape(
        keep.shape + (1,) * (X.dim() - 2)
    )  # broadcasts over trailing axes
    return torch.where(keep, X, torch.as_tensor(value, dtype=X.dtype, device=X.device))


@checked
class MaskedSoftmaxCELoss(nn.Module):
    """Cross-entropy summed over the valid tokens of each sequence.

    pred (batch, steps, vocab) logits, label (batch, steps) indices, valid_len (batch,) ->
    (batch,): sum over t < valid_len[b] of -log softmax(pred[b, t])[label[b, t]]."""

    def __init__(self):
        super().__init__()

    def forward(self, pred, label, valid_len):
        # One row of logits per token: (batch * steps, vocab) -> (batch * steps,)
        vocab_size = pred.shape[-1]
        loss = F.cross_entropy(
            pred.reshape(-1, vocab_size), label.reshape(-1).long(), reduction="none"
        )
        return sequence_mask(loss.reshape(label.shape), valid_len).sum(dim=1)


@checked
class LabelSmoothedCELoss(nn.Module):
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
        log_p = F.log_softmax(pred, dim=-1)  # (batch, steps, vocab)
        # -log p_y: the label's entry of each row, (batch, steps)
        nll = -log_p.gather(-1, label.long().unsqueeze(-1)).squeeze(-1)
        uniform = -log_p.mean(dim=-1)  # cross-entropy with the uniform distribution
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return sequence_mask(loss, valid_len).sum(dim=1)


__all__ = [
    "LabelSmoothedCELoss",
    "MaskedSoftmaxCELoss",
    "Seq2SeqAttentionDecoder",
    "Seq2SeqDecoder",
    "Seq2SeqEncoder",
    "sequence_mask",
]  # the names d2lcore.torch re-exports
