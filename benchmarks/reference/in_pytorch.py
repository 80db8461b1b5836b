"""The reference's structure in PyTorch (see the package docstring)."""

import math
import time

import torch
from torch import nn

from d2lcore.text import encode_source

from . import LossCurve


def _sequence_mask(X, valid_len, value=0.0):
    """Write ``value`` into X (rows, steps) where step >= valid_len[row], in place."""
    keep = torch.arange(X.shape[1], device=X.device)[None, :] < valid_len[:, None]
    X[~keep] = value
    return X


def _masked_softmax(scores, valid_lens):
    """Softmax over the last axis of scores (batch, queries, keys); masked keys get -1e6."""
    if valid_lens is None:
        return torch.softmax(scores, dim=-1)
    shape = scores.shape
    if valid_lens.dim() == 1:  # one length per example: one per (example, query)
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = _sequence_mask(scores.reshape(-1, shape[-1]), valid_lens, -1e6)
    return torch.softmax(flat.reshape(shape), dim=-1)


class _Additive(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        q, k = self.W_q(queries), self.W_k(keys)  # the keys are projected at every call
        scores = self.w_v(torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))).squeeze(-1)
        self.attention_weights = _masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class _DotProduct(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = _masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class _MultiHead(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout):
        super().__init__()
        self.num_heads = num_heads
        self.attention = _DotProduct(dropout)
        self.W_q, self.W_k, self.W_v, self.W_o = (
            nn.Linear(num_hiddens, num_hiddens, bias=False) for _ in range(4)
        )

    def _split(self, X):  # (batch, n, h) -> (batch * heads, n, h / heads)
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def forward(self, queries, keys, values, valid_lens):
        q, k, v = (
            self._split(self.W_q(queries)),
            self._split(self.W_k(keys)),
            self._split(self.W_v(values)),
        )
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        out = self.attention(q, k, v, valid_lens)  # (batch * heads, n, d)
        out = out.reshape(-1, self.num_heads, out.shape[1], out.shape[2]).permute(0, 2, 1, 3)
        return self.W_o(out.reshape(out.shape[0], out.shape[1], -1))


class _EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X, *args):
        state = self.decoder.init_state(self.encoder(enc_X, *args), *args)
        return self.decoder(dec_X, state)


# --- Bahdanau Attention: GRU encoder, Bahdanau decoder ---------------------------------


class _GRUEncoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout)

    def forward(self, X, *args):
        return self.rnn(self.embedding(X).permute(1, 0, 2))  # time-major


class _BahdanauDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout):
        super().__init__()
        self.attention = _Additive(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden = enc_outputs
        return [outputs.permute(1, 0, 2), hidden, enc_valid_lens]

    def forward(self, X, state):
        enc_outputs, hidden, enc_valid_lens = state
        outputs = []
        for x in self.embedding(X).permute(1, 0, 2):  # one call per target step
            query = hidden[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden = self.rnn(x.permute(1, 0, 2), hidden)
            outputs.append(out)
        logits = self.dense(torch.cat(outputs, dim=0))
        return logits.permute(1, 0, 2), [enc_outputs, hidden, enc_valid_lens]


def bahdanau_net(src_vocab, tgt_vocab, embed_size, num_hiddens, num_layers, dropout):
    encoder = _GRUEncoder(len(src_vocab), embed_size, num_hiddens, num_layers, dropout)
    decoder = _BahdanauDecoder(len(tgt_vocab), embed_size, num_hiddens, num_layers, dropout)
    return _EncoderDecoder(encoder, decoder)


# --- The Transformer --------------------------------------------------------------------


class _Positions(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        angle = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens
        )
        self.P = torch.zeros((1, max_len, num_hiddens))
        self.P[:, :, 0::2], self.P[:, :, 1::2] = torch.sin(angle), torch.cos(angle)

    def forward(self, X):  # always from position 0
        return self.dropout(X + self.P[:, : X.shape[1], :].to(X.device))


class _AddNorm(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.dropout, self.ln = nn.Dropout(dropout), nn.LayerNorm(num_hiddens)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class _FFN(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens):
        super().__init__()
        self.dense1 = nn.Linear(num_hiddens, ffn_num_hiddens)
        self.dense2 = nn.Linear(ffn_num_hiddens, num_hiddens)

    def forward(self, X):
        return self.dense2(torch.relu(self.dense1(X)))


class _EncoderBlock(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout):
        super().__init__()
        self.attention = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm1 = _AddNorm(num_hiddens, dropout)
        self.ffn = _FFN(num_hiddens, ffn_num_hiddens)
        self.addnorm2 = _AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class _TransformerEncoder(nn.Module):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = _Positions(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module(
                f"block{i}", _EncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout)
            )

    def forward(self, X, valid_lens, *args):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = []
        for blk in self.blks:
            X = blk(X, valid_lens)
            self.attention_weights.append(blk.attention.attention.attention_weights)
        return X


class _DecoderBlock(nn.Module):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm1 = _AddNorm(num_hiddens, dropout)
        self.attention2 = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm2 = _AddNorm(num_hiddens, dropout)
        self.ffn = _FFN(num_hiddens, ffn_num_hiddens)
        self.addnorm3 = _AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        cached = state[2][self.i]
        key_values = X if cached is None else torch.cat((cached, X), dim=1)
        state[2][self.i] = key_values
        if self.training:  # the causal mask, keyed on the mode
            batch, steps = X.shape[:2]
            dec_valid_lens = torch.arange(1, steps + 1, device=X.device).repeat(batch, 1)
        else:
            dec_valid_lens = None
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state


class _TransformerDecoder(nn.Module):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout):
        super().__init__()
        self.num_hiddens, self.num_layers = num_hiddens, num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = _Positions(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module(
                f"block{i}",
                _DecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i),
            )
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for blk in self.blks:
            X, state = blk(X, state)
        return self.dense(X), state


def transformer_net(
    src_vocab, tgt_vocab, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout
):
    sizes = (num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout)
    encoder = _TransformerEncoder(len(src_vocab), *sizes)
    decoder = _TransformerDecoder(len(tgt_vocab), *sizes)
    return _EncoderDecoder(encoder, decoder)


# --- training and translation ------------------------------------------------------------


def _loss(pred, label, valid_len):
    """Per-token cross-entropy, padding weighted 0, averaged over all steps: (batch,)."""
    weights = _sequence_mask(torch.ones_like(label, dtype=torch.float32), valid_len)
    unweighted = nn.functional.cross_entropy(pred.permute(0, 2, 1), label, reduction="none")
    return (unweighted * weights).mean(dim=1)


def _clip(net, theta):
    params = [p for p in net.parameters() if p.requires_grad]
    norm = torch.sqrt(sum(torch.sum(p.grad**2) for p in params))
    if norm > theta:  # read on the host
        for p in params:
            p.grad[:] *= theta / norm


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Returns (loss per token of each epoch, target tokens in all, seconds)."""

    def xavier(m):
        if type(m) is nn.Linear:
            nn.init.xavier_uniform_(m.weight)
        if type(m) is nn.GRU:
            for name in m._flat_weights_names:
                if "weight" in name:
                    nn.init.xavier_uniform_(m._parameters[name])

    net.apply(xavier)
    net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    losses, total_tokens = [], 0
    curve = LossCurve(num_epochs)
    start = time.perf_counter()
    for epoch in range(num_epochs):
        loss_sum, tokens = 0.0, 0
        for batch in data_iter:
            optimizer.zero_grad()
            X, X_valid_len, Y, Y_valid_len = (x.to(device) for x in batch)
            bos = torch.tensor([tgt_vocab["<bos>"]] * Y.shape[0], device=device).reshape(-1, 1)
            dec_input = torch.cat([bos, Y[:, :-1]], 1)
            Y_hat, _ = net(X, dec_input, X_valid_len)
            loss = _loss(Y_hat, Y, Y_valid_len)
            loss.sum().backward()
            _clip(net, 1)
            num_tokens = Y_valid_len.sum()
            optimizer.step()
            with torch.no_grad():  # read on the host at every batch
                loss_sum += float(loss.sum())
                tokens += int(num_tokens)
        losses.append(loss_sum / tokens)
        total_tokens += tokens
        if (epoch + 1) % 10 == 0:
            curve.add(epoch + 1, losses[-1])
    return losses, total_tokens, time.perf_counter() - start


def predict_seq2seq(net, src_sentence, src_vocab, tgt_vocab, num_steps, device):
    net.eval()
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    enc_X = torch.tensor([src], dtype=torch.long, device=device)
    enc_valid_len = torch.tensor([src_valid_len], device=device)
    state = net.decoder.init_state(net.encoder(enc_X, enc_valid_len), enc_valid_len)
    dec_X = torch.tensor([[tgt_vocab["<bos>"]]], dtype=torch.long, device=device)
    output = []
    with torch.no_grad():
        for _ in range(num_steps):
            Y, state = net.decoder(dec_X, state)
            dec_X = Y.argmax(dim=2)
            token = int(dec_X.squeeze(0).item())
            if token == tgt_vocab["<eos>"]:
                break
            output.append(token)
    return " ".join(tgt_vocab.to_tokens(output))
