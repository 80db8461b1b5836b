"""The reference's structure in TensorFlow, eager (see the package docstring)."""

import time

import keras
import numpy
import tensorflow as tf

from d2lcore.text import encode_source

from . import LossCurve


def _sequence_mask(X, valid_len, value=0.0):
    """X (rows, steps[, ...]) with ``value`` where step >= valid_len[row]."""
    keep = tf.range(X.shape[1])[None, :] < tf.cast(valid_len[:, None], tf.int32)
    if len(X.shape) == 3:
        keep = keep[:, :, None]
        keep = tf.broadcast_to(keep, X.shape)
    return tf.where(keep, X, value)


def _masked_softmax(scores, valid_lens):
    if valid_lens is None:
        return tf.nn.softmax(scores, axis=-1)
    shape = scores.shape
    if len(valid_lens.shape) == 1:
        valid_lens = tf.repeat(valid_lens, repeats=shape[1])
    else:
        valid_lens = tf.reshape(valid_lens, -1)
    flat = _sequence_mask(tf.reshape(scores, (-1, shape[-1])), valid_lens, -1e6)
    return tf.nn.softmax(tf.reshape(flat, shape), axis=-1)


class _Additive(keras.layers.Layer):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = keras.layers.Dense(num_hiddens, use_bias=False)
        self.W_q = keras.layers.Dense(num_hiddens, use_bias=False)
        self.w_v = keras.layers.Dense(1, use_bias=False)
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, queries, keys, values, valid_lens, training=False):
        q, k = self.W_q(queries), self.W_k(keys)
        features = tf.tanh(tf.expand_dims(q, 2) + tf.expand_dims(k, 1))
        scores = tf.squeeze(self.w_v(features), axis=-1)
        self.attention_weights = _masked_softmax(scores, valid_lens)
        return tf.matmul(self.dropout(self.attention_weights, training=training), values)


class _DotProduct(keras.layers.Layer):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, queries, keys, values, valid_lens, training=False):
        d = tf.cast(queries.shape[-1], tf.float32)
        scores = tf.matmul(queries, keys, transpose_b=True) / tf.math.sqrt(d)
        self.attention_weights = _masked_softmax(scores, valid_lens)
        return tf.matmul(self.dropout(self.attention_weights, training=training), values)


class _MultiHead(keras.layers.Layer):
    def __init__(self, num_hiddens, num_heads, dropout):
        super().__init__()
        self.num_heads = num_heads
        self.attention = _DotProduct(dropout)
        self.W_q, self.W_k, self.W_v, self.W_o = (
            keras.layers.Dense(num_hiddens, use_bias=False) for _ in range(4)
        )

    def _split(self, X):
        X = tf.reshape(X, (X.shape[0], X.shape[1], self.num_heads, -1))
        X = tf.transpose(X, perm=(0, 2, 1, 3))
        return tf.reshape(X, (-1, X.shape[2], X.shape[3]))

    def call(self, queries, keys, values, valid_lens, training=False):
        q = self._split(self.W_q(queries))
        k, v = self._split(self.W_k(keys)), self._split(self.W_v(values))
        if valid_lens is not None:
            valid_lens = tf.repeat(valid_lens, repeats=self.num_heads, axis=0)
        out = self.attention(q, k, v, valid_lens, training=training)
        out = tf.reshape(out, (-1, self.num_heads, out.shape[1], out.shape[2]))
        out = tf.transpose(out, perm=(0, 2, 1, 3))
        return self.W_o(tf.reshape(out, (out.shape[0], out.shape[1], -1)))


class _EncoderDecoder(keras.Model):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def call(self, enc_X, dec_X, *args, training=False):
        enc_outputs = self.encoder(enc_X, *args, training=training)
        state = self.decoder.init_state(enc_outputs, *args)
        return self.decoder(dec_X, state, training=training)


def _stacked_gru(num_hiddens, num_layers, dropout):
    cells = [keras.layers.GRUCell(num_hiddens, dropout=dropout) for _ in range(num_layers)]
    return keras.layers.RNN(
        keras.layers.StackedRNNCells(cells), return_sequences=True, return_state=True
    )


def _layer_states(states):
    """Keras 3 returns each GRU layer's state as a list of one (batch, h) tensor."""
    return [s[0] if isinstance(s, list | tuple) else s for s in states]


# --- Bahdanau Attention ------------------------------------------------------------------


class _GRUEncoder(keras.layers.Layer):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout):
        super().__init__()
        self.embedding = keras.layers.Embedding(vocab_size, embed_size)
        self.rnn = _stacked_gru(num_hiddens, num_layers, dropout)

    def call(self, X, *args, training=False):
        out = self.rnn(self.embedding(X), training=training)  # batch-major
        return out[0], _layer_states(out[1:])


class _BahdanauDecoder(keras.layers.Layer):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout):
        super().__init__()
        self.attention = _Additive(num_hiddens, dropout)
        self.embedding = keras.layers.Embedding(vocab_size, embed_size)
        self.rnn = _stacked_gru(num_hiddens, num_layers, dropout)
        self.dense = keras.layers.Dense(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden = enc_outputs
        return [outputs, list(hidden), enc_valid_lens]

    def call(self, X, state, training=False):
        enc_outputs, hidden, enc_valid_lens = state
        embs = tf.transpose(self.embedding(X), perm=(1, 0, 2))
        outputs = []
        for x in embs:  # one call per target step
            query = tf.expand_dims(hidden[-1], axis=1)
            context = self.attention(
                query, enc_outputs, enc_outputs, enc_valid_lens, training=training
            )
            x = tf.concat((context, tf.expand_dims(x, axis=1)), axis=-1)
            out = self.rnn(x, initial_state=[[h] for h in hidden], training=training)
            hidden = _layer_states(out[1:])
            outputs.append(out[0])
        logits = self.dense(tf.concat(outputs, axis=1))
        return logits, [enc_outputs, hidden, enc_valid_lens]


def bahdanau_net(src_vocab, tgt_vocab, embed_size, num_hiddens, num_layers, dropout):
    encoder = _GRUEncoder(len(src_vocab), embed_size, num_hiddens, num_layers, dropout)
    decoder = _BahdanauDecoder(len(tgt_vocab), embed_size, num_hiddens, num_layers, dropout)
    return _EncoderDecoder(encoder, decoder)


# --- The Transformer ---------------------------------------------------------------------


class _Positions(keras.layers.Layer):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = keras.layers.Dropout(dropout)
        angle = numpy.arange(max_len, dtype=numpy.float32).reshape(-1, 1) / numpy.power(
            10000, numpy.arange(0, num_hiddens, 2, dtype=numpy.float32) / num_hiddens
        )
        P = numpy.zeros((1, max_len, num_hiddens), dtype=numpy.float32)
        P[:, :, 0::2], P[:, :, 1::2] = numpy.sin(angle), numpy.cos(angle)
        self.P = P

    def call(self, X, training=False):  # always from position 0
        return self.dropout(X + self.P[:, : X.shape[1], :], training=training)


class _AddNorm(keras.layers.Layer):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = keras.layers.Dropout(dropout)
        self.ln = keras.layers.LayerNormalization(axis=-1)  # Keras's epsilon, 1e-3

    def call(self, X, Y, training=False):
        return self.ln(self.dropout(Y, training=training) + X)


class _FFN(keras.layers.Layer):
    def __init__(self, num_hiddens, ffn_num_hiddens):
        super().__init__()
        self.dense1 = keras.layers.Dense(ffn_num_hiddens, activation="relu")
        self.dense2 = keras.layers.Dense(num_hiddens)

    def call(self, X):
        return self.dense2(self.dense1(X))


class _EncoderBlock(keras.layers.Layer):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout):
        super().__init__()
        self.attention = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm1 = _AddNorm(dropout)
        self.ffn = _FFN(num_hiddens, ffn_num_hiddens)
        self.addnorm2 = _AddNorm(dropout)

    def call(self, X, valid_lens, training=False):
        attended = self.attention(X, X, X, valid_lens, training=training)
        Y = self.addnorm1(X, attended, training=training)
        return self.addnorm2(Y, self.ffn(Y), training=training)


class _TransformerEncoder(keras.layers.Layer):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = keras.layers.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = _Positions(num_hiddens, dropout)
        self.blks = [
            _EncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout)
            for _ in range(num_layers)
        ]

    def call(self, X, valid_lens, training=False):
        scale = tf.math.sqrt(tf.cast(self.num_hiddens, tf.float32))
        X = self.pos_encoding(self.embedding(X) * scale, training=training)
        for blk in self.blks:
            X = blk(X, valid_lens, training=training)
        return X


class _DecoderBlock(keras.layers.Layer):
    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm1 = _AddNorm(dropout)
        self.attention2 = _MultiHead(num_hiddens, num_heads, dropout)
        self.addnorm2 = _AddNorm(dropout)
        self.ffn = _FFN(num_hiddens, ffn_num_hiddens)
        self.addnorm3 = _AddNorm(dropout)

    def call(self, X, state, training=False):
        enc_outputs, enc_valid_lens = state[0], state[1]
        cached = state[2][self.i]
        key_values = X if cached is None else tf.concat((cached, X), axis=1)
        state[2][self.i] = key_values
        if training:  # the causal mask, keyed on the mode
            batch, steps = X.shape[:2]
            dec_valid_lens = tf.repeat(tf.reshape(tf.range(1, steps + 1), (1, -1)), batch, 0)
        else:
            dec_valid_lens = None
        Y = self.addnorm1(
            X,
            self.attention1(X, key_values, key_values, dec_valid_lens, training=training),
            training=training,
        )
        Z = self.addnorm2(
            Y,
            self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens, training=training),
            training=training,
        )
        return self.addnorm3(Z, self.ffn(Z), training=training), state


class _TransformerDecoder(keras.layers.Layer):
    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout):
        super().__init__()
        self.num_hiddens, self.num_layers = num_hiddens, num_layers
        self.embedding = keras.layers.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = _Positions(num_hiddens, dropout)
        self.blks = [
            _DecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i)
            for i in range(num_layers)
        ]
        self.dense = keras.layers.Dense(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def call(self, X, state, training=False):
        scale = tf.math.sqrt(tf.cast(self.num_hiddens, tf.float32))
        X = self.pos_encoding(self.embedding(X) * scale, training=training)
        for blk in self.blks:
            X, state = blk(X, state, training=training)
        return self.dense(X), state


def transformer_net(
    src_vocab, tgt_vocab, num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout
):
    sizes = (num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout)
    encoder = _TransformerEncoder(len(src_vocab), *sizes)
    decoder = _TransformerDecoder(len(tgt_vocab), *sizes)
    return _EncoderDecoder(encoder, decoder)


# --- training and translation ------------------------------------------------------------


def _loss(label, pred, valid_len):
    """Per-token cross-entropy, padding weighted 0, averaged over all steps: (batch,)."""
    weights = _sequence_mask(tf.ones_like(label, dtype=tf.float32), valid_len)
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    return tf.reduce_mean(ce(label, pred) * weights, axis=1)


def _clip(grads, theta):
    dense = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]
    norm = tf.math.sqrt(sum(tf.reduce_sum(g**2) for g in dense)).numpy()  # on the host
    if norm > theta:
        dense = [g * theta / norm for g in dense]
    return dense


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Returns (loss per token of each epoch, target tokens in all, seconds)."""
    optimizer = keras.optimizers.Adam(learning_rate=lr)
    losses, total_tokens = [], 0
    curve = LossCurve(num_epochs)
    start = time.perf_counter()
    for epoch in range(num_epochs):
        loss_sum, tokens = 0.0, 0
        for X, X_valid_len, Y, Y_valid_len in data_iter:
            bos = tf.reshape(tf.constant([tgt_vocab["<bos>"]] * Y.shape[0]), (-1, 1))
            dec_input = tf.concat([bos, Y[:, :-1]], 1)
            with tf.GradientTape() as tape:
                Y_hat, _ = net(X, dec_input, X_valid_len, training=True)
                loss = _loss(Y, Y_hat, Y_valid_len)
            grads = tape.gradient(loss, net.trainable_variables)
            optimizer.apply_gradients(zip(_clip(grads, 1), net.trainable_variables))
            loss_sum += float(tf.reduce_sum(loss))  # read on the host at every batch
            tokens += int(tf.reduce_sum(Y_valid_len))
        losses.append(loss_sum / tokens)
        total_tokens += tokens
        if (epoch + 1) % 10 == 0:
            curve.add(epoch + 1, losses[-1])
    return losses, total_tokens, time.perf_counter() - start


def predict_seq2seq(net, src_sentence, src_vocab, tgt_vocab, num_steps, device=None):
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    enc_X = tf.constant([src], dtype=tf.int32)
    enc_valid_len = tf.constant([src_valid_len], dtype=tf.int32)
    enc_outputs = net.encoder(enc_X, enc_valid_len, training=False)
    state = net.decoder.init_state(enc_outputs, enc_valid_len)
    dec_X = tf.constant([[tgt_vocab["<bos>"]]], dtype=tf.int32)
    output = []
    for _ in range(num_steps):
        Y, state = net.decoder(dec_X, state, training=False)
        dec_X = tf.argmax(Y, axis=2, output_type=tf.int32)
        token = int(dec_X[0, 0])
        if token == tgt_vocab["<eos>"]:
            break
        output.append(token)
    return " ".join(tgt_vocab.to_tokens(output))
