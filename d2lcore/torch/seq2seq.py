"""Sequence to sequence learning with Bahdanau attention in PyTorch (sections 4 and 5): a GRU
encoder, a GRU decoder that attends to the encoder's outputs, and the masked loss."""

import torch
from torch import nn
from torch.nn import functional as F

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
        self.rnn = nn.GRU(
            embed_size, num_hiddens, num_layers, dropout=dropout, batch_first=True
        )

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
        outputs, hidden = check_decoder_init(enc_outputs, enc_valid_lens)
        return outputs, hidden, enc_valid_lens

    def forward(self, X, state):
        check_decoder_call(X, state, self.vocab_size)
        enc_outputs, hidden, enc_valid_lens = state
        embs = self.embedding(X)  # (batch, steps, embed_size)
        # Keys and values: the encoder's outputs h_1..h_T, the same at every step, so W_k
        # is applied to the keys once, by fix_keys, not at every step
        attend = fix_keys(self.attention, enc_outputs, enc_outputs, enc_valid_lens)
        outputs, self._attention_weights = [], []
        for emb in embs.split(1, dim=1):  # emb: (batch, 1, embed), that of y_{t'-1}
            query = hidden[-1].unsqueeze(1)  # (batch, 1, h): s_{t'-1}, last layer
            context, weights = attend(query)  # c_{t'}: (batch, 1, h)
            # The GRU's input: [c_{t'}, embedding of y_{t'-1}], (batch, 1, h + embed)
            x = torch.cat((context, emb), dim=-1)
            out, hidden = self.rnn(x, hidden)  # out: (batch, 1, h)
            outputs.append(out)
            self._attention_weights.append(weights)
        logits = self.dense(torch.cat(outputs, dim=1))  # (batch, steps, vocab_size)
        return logits, (enc_outputs, hidden, enc_valid_lens)

    @property
    def attention_weights(self):
        """(batch, steps, src_steps): the attention weights of every step of the last
        call; None before the first call."""
        if not self._attention_weights:  # no call yet
            return None
        return torch.cat(self._attention_weights, dim=1)


def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by
    ``value``, as a new tensor. valid_len: (batch,)."""
    if not torch.is_tensor(X):
        raise TypeError(f"X must be a torch.Tensor; got {type(X).__name__}")
    if X.dim() < 2:
        raise ValueError(f"X must have shape (batch, steps, ...); got {tuple(X.shape)}")
    check_real("value", value, finite=False)
    valid_len = torch.as_tensor(valid_len, device=X.device)
    check_lengths("valid_len", valid_len.cpu().numpy())
    if tuple(valid_len.shape) != (X.shape[0],):
        raise ValueError(
            f"valid_len must have shape (batch,) = ({X.shape[0]},) for X of shape "
            f"{tuple(X.shape)}; got {tuple(valid_len.shape)}"
        )
    keep = torch.arange(X.shape[1], device=X.device) < valid_len.reshape(-1, 1)
    keep = keep.reshape(
        keep.shape + (1,) * (X.dim() - 2)
    )  # broadcasts over trailing axes
    return torch.where(keep, X, torch.as_tensor(value, dtype=X.dtype, device=X.device))


class MaskedSoftmaxCELoss(nn.Module):
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
        # One row of logits per token: (batch * steps, vocab) -> (batch * steps,)
        vocab_size = pred.shape[-1]
        loss = F.cross_entropy(
            pred.reshape(-1, vocab_size), label.reshape(-1).long(), reduction="none"
        )
        return sequence_mask(loss.reshape(label.shape), valid_len).sum(dim=1)
