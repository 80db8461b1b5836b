"""The reference's structure in MXNet, with Gluon blocks that are not hybridised (see the
package docstring). Import d2lcore.mxnet first (its NumPy shim and npx.set_np())."""

import math
import time

from mxnet import autograd, gluon, init, np, npx
from mxnet.gluon import nn, rnn

from d2lcore.text import encode_source

from . import LossCurve


def _masked_softmax(scores, valid_lens):
    if valid_lens is None:
        return npx.softmax(scores)
    shape = scores.shape
    if valid_lens.ndim == 1:
        valid_lens = valid_lens.repeat(shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = npx.sequence_mask(scores.reshape(-1, shape[-1]), valid_lens, True, value=-1e6, axis=1)
    return npx.softmax(flat).reshape(shape)


class _Additive(nn.Block):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.W_q = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.w_v = nn.Dense(1, use_bias=False, flatten=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        q, k = self.W_q(queries), self.W_k(keys)
        features = np.tanh(np.expand_dims(q, axis=2) + np.expand_dims(k, axis=1))
        scores = np.squeeze(self.w_v(features), axis=-1)
        self.attention_weights = _masked_softmax(scores, valid_lens)
        return npx.batch_dot(self.dropout(self.attention_weights), values)


class _DotProduct(nn.Block):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = npx.batch_dot(queries, keys, transpose_b=True) / math.sqrt(d)
        self.attention_weights = _masked_softmax(scores, valid_lens)
        return npx.batch_dot(self.dropout(self.attention_weights), values)


class _MultiHead(nn.Block):
    def __init__(self, num_hiddens, num_heads, dropout):
        super().__init__()
        self.num_heads = num_heads
        self.attention = _DotProduct(dropout)
        self.W_q = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.W_k = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.W_v = nn.Dense(num_hiddens, use_bias=False, flatten=False)
        self.W_o = nn.Dense(num_hiddens, use_bias=False, flatten=False)

    def _split(self, X):
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).transpose(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def forward(self, queries, keys, values, valid_lens):
        q, k = self._split(self.W_q(queries)), self._split(self.W_k(keys))
        v = self._split(self.W_v(values))
        if valid_lens is not None:
            valid_lens = valid_lens.repeat(self.num_heads, axis=0)
        out = self.attention(q, k, v, valid_lens)
        out = out.reshape(-1, self.num_heads, out.shape[1], out.shape[2]).transpose(0, 2, 1, 3)
        return self.W_o(out.reshape(out.shape[0], out.shape[1], -1))


class _EncoderDecoder(nn.Block):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X, *args):
        state = self.decoder.init_state(self.encoder(enc_X, *args), *args)
        return self.decoder(dec_X, state)


# --- Bahdanau Attention ------------------------------------------------------------------


class _GRUEncoder(nn.Block):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = rnn.GRU(num_hiddens, num_layers, dropout=dropout)

    def forward(self, X, *args):
        X = self.embedding(X).swapaxes(0, 1)  # time-major
        state = self.rnn.begin_state(batch_size=X.shape[1], ctx=X.ctx)
        return self.rnn(X, state)


class _BahdanauDecoder(nn.Block):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout):
        super().__init__()
        self.attention = _Additive(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = rnn.GRU(num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Dense(vocab_size, flatten=False)

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden = enc_outputs
        return [outputs.swapaxes(0, 1), hidden, enc_valid_lens]

    def forward(self, X, state):
        enc_outputs, hidden, enc_valid_lens = state
        outputs = []
        for x in self.embedding(X).swapaxes(0, 1):  # one call per target step
            query = np.expand_dims(hidden[0][-1], axis=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = np.concatenate((context, np.expand_dims(x, axis=1)), axis=-1)
            out, hidden = self.rnn(x.swapaxes(0, 1), hidden)
            outputs.append(out)
        logits = self.dense(np.concatenate(outputs, axis=0))
        return logits.swapaxes(0, 1), [enc_outputs, hidden, enc_valid_lens]


def bahdanau_net(src_vocab, tgt_vocab, embed_size, num_hiddens, num_layers, dropout):
    encoder = _GRUEncoder(len(src_vocab), embed_size, num_hiddens, num_layers, dropout)
    decoder = _BahdanauDecoder(len(tgt_vocab), embed_size, num_hiddens, num_layers, dropout)
    return _EncoderDecoder(encoder, decoder)


# --- The Transformer ---------------------------------------------------------------------


class _Positions(nn.Block):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        angle = np.arange(max_len).reshape(-1, 1) / np.power(
            10000, np.arange(0, num_hiddens, 2) / num_hiddens
        )
        self.P = np.zeros((1, max_len, num_hiddens))
        self.P[:, :, 0::2], self.P[:, :, 1::2] = np.sin(angle), np.cos(angle)

    def forward(self, X):  # always from position 0
        return self.dropout(X + self.P[:, : X.shape[1], :].as_in_ctx(X.ctx))


class _AddNorm(nn.Block):
    def __init__(self, dropout):
        super().__init__()
        self.dropout, self.ln = nn.Dropout(dropout), nn.LayerNorm()

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class _FFN(nn.Block):
    def __init__(self, num_hiddens, ffn_num_hiddens):
        super().__init__()
        self.dense1 = nn.Dense(ffn_num_hiddens, flatten=False, activation="relu")
        self.dense2 = nn.Dense(num_hiddens, flatten=False)

    def forward(self, X):
        return self.dense2(self.dense1(X))


class _EncoderBlock(nn.Block):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout):
        super().__init__()
        self.attention = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm1 = _AddNorm(dropout)
        self.ffn = _FFN(num_hiddens, ffn_num_hiddens)
        self.addnorm2 = _AddNorm(dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class _TransformerEncoder(nn.Block):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = _Positions(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for _ in range(num_layers):
            self.blks.add(_EncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout))

    def forward(self, X, valid_lens, *args):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for blk in self.blks:
            X = blk(X, valid_lens)
        return X


class _DecoderBlock(nn.Block):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm1 = _AddNorm(dropout)
        self.attention2 = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm2 = _AddNorm(dropout)
        self.ffn = _FFN(num_hiddens, ffn_num_hiddens)
        self.addnorm3 = _AddNorm(dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        cached = state[2][self.i]
        key_values = X if cached is None else np.concatenate((cached, X), axis=1)
        state[2][self.i] = key_values
        if autograd.is_training():  # the causal mask, keyed on the mode
            batch, steps = X.shape[:2]
            dec_valid_lens = np.tile(np.arange(1, steps + 1, ctx=X.ctx), (batch, 1))
        else:
            dec_valid_lens = None
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state


class _TransformerDecoder(nn.Block):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout):
        super().__init__()
        self.num_hiddens, self.num_layers = num_hiddens, num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = _Positions(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add(_DecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.Dense(vocab_size, flatten=False)

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


class _Loss(gluon.loss.SoftmaxCrossEntropyLoss):
    """Per-token cross-entropy, padding weighted 0, averaged over all steps: (batch,)."""

    def forward(self, pred, label, valid_len):
        weights = np.expand_dims(np.ones(label.shape, ctx=label.ctx), axis=-1)
        weights = npx.sequence_mask(weights, valid_len, True, axis=1)
        return super().forward(pred, label, weights)


def _clip(net, theta):
    params = [p.data() for p in net.collect_params().values()]
    norm = math.sqrt(sum(float((p.grad**2).sum()) for p in params))  # on the host
    if norm > theta:
        for p in params:
            p.grad[:] *= theta / norm


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Returns (loss per token of each epoch, target tokens in all, seconds)."""
    net.initialize(init.Xavier(), force_reinit=True, ctx=device)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr})
    loss_fn = _Loss()
    losses, total_tokens = [], 0
    curve = LossCurve(num_epochs)
    start = time.perf_counter()
    for epoch in range(num_epochs):
        loss_sum, tokens = 0.0, 0
        for batch in data_iter:
            X, X_valid_len, Y, Y_valid_len = (x.as_in_ctx(device) for x in batch)
            bos = np.array([tgt_vocab["<bos>"]] * Y.shape[0], dtype=Y.dtype, ctx=device)
            bos = bos.reshape(-1, 1)
            dec_input = np.concatenate([bos, Y[:, :-1]], 1)
            with autograd.record():
                Y_hat, _ = net(X, dec_input, X_valid_len)
                loss = loss_fn(Y_hat, Y, Y_valid_len)
            loss.backward()
            _clip(net, 1)
            num_tokens = Y_valid_len.sum()
            trainer.step(num_tokens)  # the gradient divided by the number of tokens
            loss_sum += float(loss.sum())  # read on the host at every batch
            tokens += int(num_tokens)
        losses.append(loss_sum / tokens)
        total_tokens += tokens
        if (epoch + 1) % 10 == 0:
            curve.add(epoch + 1, losses[-1])
    return losses, total_tokens, time.perf_counter() - start


def predict_seq2seq(net, src_sentence, src_vocab, tgt_vocab, num_steps, device):
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    enc_X = np.array([src], ctx=device)
    enc_valid_len = np.array([src_valid_len], ctx=device)
    state = net.decoder.init_state(net.encoder(enc_X, enc_valid_len), enc_valid_len)
    dec_X = np.array([[tgt_vocab["<bos>"]]], ctx=device)
    output = []
    for _ in range(num_steps):
        Y, state = net.decoder(dec_X, state)
        dec_X = Y.argmax(axis=2)
        token = int(dec_X.squeeze(axis=0).astype("int32").item())
        if token == tgt_vocab["<eos>"]:
            break
        output.append(token)
    return " ".join(tgt_vocab.to_tokens(output))
