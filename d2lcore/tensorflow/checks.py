"""Checks of TensorFlow tensors' dtypes and contents: the framework facts behind the
messages of :mod:`d2lcore.checks`; and, at the end, the argument checks of the taught
classes and functions, registered by taught name in ``CHECKS`` and attached by ``@checked``
(d2lcore.boundary)."""

import contextlib
import re
import types

import numpy
import tensorflow as tf

from d2lcore import checks
from d2lcore.boundary import Checks
from d2lcore.checks import (
    check_add_norm,
    check_attention_to_save,
    check_built_widths,
    check_context_state,
    check_dropout,
    check_epoch_tokens,
    check_heads,
    check_int,
    check_lengths,
    check_positions,
    check_real,
    check_seq2seq_batch,
    check_shapes,
    check_sizes,
    check_steps,
    check_training_points,
    check_translation_ids,
    check_vocab,
    dtype_error,
    token_ids_error,
    valid_lens_spec,
)
from d2lcore.text import encode_source
from d2lcore.transformer import check_decoder_state, check_width

from .layers import lazy_layer

CHECKS = Checks()
"""The argument checks of this framework's taught classes and functions, by taught name (d2lcore.boundary)."""


def checked(obj):
    """Attach the checks of ``CHECKS`` registered under the name of ``obj``, a taught class or function
    (d2lcore.boundary); returns the class, or the checked function. A Keras layer class is also made a
    :func:`~d2lcore.tensorflow.layers.lazy_layer`: its sublayers create their weights on their first call, and
    its call may take Python values (an offset, a decoder state) besides tensors."""
    return lazy_layer(CHECKS.checked(obj))


def _dtype(name, X):
    try:
        return tf.as_dtype(X.dtype)
    except (AttributeError, TypeError):
        raise TypeError(f"{name} must be a tf.Tensor; got {type(X).__name__}") from None


def check_float(**tensors):
    """Check that each keyword's value is a floating-point tensor (or NumPy array)."""
    for name, X in tensors.items():
        if not _dtype(name, X).is_floating:
            raise dtype_error(name, X.dtype.name, "a floating-point")


def check_token_ids(name, X, vocab_size):
    """Check that X holds integer token indices 0 ... vocab_size - 1 (TensorFlow's
    embeddings would wrap the others silently). Eagerly: the values are read (one wait per
    call) and checked with NumPy; inside tf.function the values are not checked
    (train_seq2seq checks each batch before its compiled step)."""
    if not _dtype(name, X).is_integer:
        raise dtype_error(name, tf.as_dtype(X.dtype).name, "an integer")
    if tf.executing_eagerly():
        # NumPy's two reductions: much cheaper than four eager TensorFlow operations
        ids = numpy.asarray(X)
        if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
            raise token_ids_error(name, ids, vocab_size)


def marked(message):
    """A graph assertion's message, marked as ours for :func:`graph_errors`."""
    return f"<d2lcore>{message}</d2lcore>"


def check_valid_lens(name, valid_lens):
    """Check that the tensor ``valid_lens`` holds lengths, whole numbers >= 0; return
    whether one may be 0. Eagerly the values are read (no wait on a CPU); inside
    tf.function the same checks run on the device with the graph (tf.debugging), and fail
    with an InvalidArgumentError holding our message, which :func:`graph_errors` turns
    back into a ValueError."""
    if tf.executing_eagerly():
        lengths = valid_lens.numpy()
        check_lengths(name, lengths)
        return bool((lengths == 0).any())
    if not (valid_lens.dtype.is_integer or valid_lens.dtype.is_floating):  # e.g. bool
        check_lengths(name, valid_lens.dtype.as_numpy_dtype(0))  # raises its TypeError
    got = "got other values inside a TensorFlow graph (tf.function)"
    if valid_lens.dtype.is_floating:
        whole = marked(f"{name} must hold whole numbers (lengths); {got}")
        tf.debugging.assert_equal(valid_lens, tf.round(valid_lens), message=whole)
    tf.debugging.assert_non_negative(
        valid_lens, message=marked(f"{name} must be >= 0; {got}")
    )
    return True


@contextlib.contextmanager
def graph_errors():
    """Around a call of a TensorFlow graph (tf.function) made by d2lcore: a failed check
    of :func:`check_valid_lens` inside the graph comes out as a ValueError with its message
    instead of TensorFlow's InvalidArgumentError."""
    try:
        yield
    except tf.errors.InvalidArgumentError as error:
        ours = re.search(r"<d2lcore>(.*?)</d2lcore>", str(error), re.S)
        if ours is None:
            raise
        raise ValueError(ours.group(1)) from None


def _lengths(lens):
    """lens as NumPy for the neutral checks; None inside tf.function, where the values are
    unknown (train_seq2seq checks each batch before its compiled step)."""
    return tf.convert_to_tensor(lens).numpy() if tf.executing_eagerly() else None


check_decoder_init, check_decoder_call = checks.decoder_checks(check_token_ids, _lengths)


# --- the checks of the taught classes and functions (attached by @checked) ----------------------------------


def _valid_lens(valid_lens, shapes, queries="n_q", name="valid_lens"):
    """valid_lens (the argument ``name``) made a tensor, its shape (batch,) or (batch,
    <queries>) checked with the ``shapes`` of the other arguments (check_shapes' pairs by
    name), its values checked (check_valid_lens)."""
    valid_lens = tf.convert_to_tensor(valid_lens)
    spec = valid_lens_spec(valid_lens, queries)
    check_shapes(**shapes, **{name: (valid_lens, spec)})
    check_valid_lens(name, valid_lens)
    return valid_lens


# Attention Pooling: Nadaraya–Watson Kernel Regression


@CHECKS.call("NWKernelRegression")
def _nw_kernel_regression_call(net, queries, keys, values):
    check_shapes(queries=(queries, "n"), keys=(keys, "n m"), values=(values, "n m"))
    check_float(queries=queries, keys=keys, values=values)


@CHECKS.call("train_nw")
def _train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    # targets of shape (n, 1) would silently broadcast against the predictions
    shapes = dict(queries=(queries, "n"), keys=(keys, "n m"), values=(values, "n m"))
    n = check_shapes(**shapes, targets=(targets, "n")).get("n")
    check_training_points(n)
    check_float(queries=queries, keys=keys, values=values, targets=targets)
    check_real("lr", lr, minimum=0)
    check_int("num_epochs", num_epochs, minimum=1)


# Attention Scoring Functions


@CHECKS.call("masked_softmax")
def _masked_softmax(X, valid_lens):
    check_float(X=X)
    if valid_lens is None:
        check_shapes(X=(X, "batch queries keys"))
        return None
    return (X, _valid_lens(valid_lens, dict(X=(X, "batch queries keys")), "queries")), {}


@CHECKS.call("AdditiveAttention")
def _additive_attention_call(
    layer, queries, keys, values, valid_lens=None, training=None
):
    shapes = _attention_shapes(queries, keys, values, "d_q", "d_k")
    check_built_widths(layer, queries=queries, keys=keys)
    if valid_lens is not None:
        valid_lens = _valid_lens(valid_lens, shapes)
    return (layer, queries, keys, values, valid_lens), {"training": training}


@CHECKS.call("DotProductAttention")
def _dot_product_attention_call(
    layer, queries, keys, values, valid_lens=None, training=None
):
    shapes = _attention_shapes(queries, keys, values, "d", "d")  # q^T k: one size d
    if valid_lens is not None:
        valid_lens = _valid_lens(valid_lens, shapes)
    return (layer, queries, keys, values, valid_lens), {"training": training}


def _attention_shapes(queries, keys, values, d_q, d_k):
    """Check an attention layer's queries (batch, n_q, d_q), keys (batch, n_k, d_k) and
    values (batch, n_k, d_v), floats; return check_shapes' pairs for _valid_lens."""
    shapes = dict(
        queries=(queries, f"batch n_q {d_q}"),
        keys=(keys, f"batch n_k {d_k}"),
        values=(values, "batch n_k d_v"),
    )
    check_shapes(**shapes)
    check_float(queries=queries, keys=keys, values=values)
    return shapes


# Multi-Head Attention


@CHECKS.call("transpose_qkv")
def _transpose_qkv(X, num_heads):
    dims = check_shapes(X=(X, "batch n num_hiddens"))
    check_heads(dims.get("num_hiddens"), num_heads)


@CHECKS.call("transpose_output")
def _transpose_output(X, num_heads):
    check_int("num_heads", num_heads, minimum=1)
    dims = check_shapes(X=(X, "batch_heads n d"))
    if dims.get("batch_heads", 0) % num_heads:
        raise ValueError(
            f"X's first dimension ({dims['batch_heads']}) must be a multiple of "
            f"num_heads ({num_heads}): it holds batch * num_heads rows; got X of shape "
            f"{tuple(X.shape)}"
        )


@CHECKS.call("MultiHeadAttention")
def _multihead_attention_call(
    layer, queries, keys, values, valid_lens=None, training=None
):
    shapes = _attention_shapes(queries, keys, values, "d_q", "d_k")
    check_built_widths(layer, queries=queries, keys=keys, values=values)
    if valid_lens is not None:  # checked here once, not by each head
        valid_lens = _valid_lens(valid_lens, shapes)
    return (layer, queries, keys, values, valid_lens), {"training": training}


# Self-Attention and Positional Encoding: positional encoding


@CHECKS.call("PositionalEncoding")
def _positional_encoding_call(layer, X, offset=0, training=None):
    _, max_len, num_hiddens = layer.P.shape  # the table: (1, max_len, num_hiddens)
    steps = check_positions(X, num_hiddens, offset, max_len)
    check_float(X=X)
    if steps is None:  # unknown until run time (tf.function): check it in the graph
        _assert_positions_fit(X, offset, max_len)


def _assert_positions_fit(X, offset, max_len):
    """Inside tf.function, where the number of steps of X (batch, steps, ...) is unknown: a
    graph assertion that the positions offset, ..., offset + steps - 1 fit in a table of
    max_len positions (failing with our message, see graph_errors)."""
    tf.debugging.assert_less_equal(
        offset + tf.shape(X)[1],
        max_len,
        message=marked(
            f"X must have at most max_len - offset = {max_len} - offset steps; "
            "got more inside a TensorFlow graph: raise max_len"
        ),
    )


def _assert_cached_positions_fit(X, cache, max_len):
    """Inside tf.function, for a decoder whose cache (batch, past, num_hiddens) has a
    length known only when the graph runs: a graph assertion that X's steps, after the
    past cached positions, fit in the positional table of max_len positions, whose slice
    would otherwise come out short silently (failing with our message, see
    graph_errors)."""
    tf.debugging.assert_less_equal(
        tf.shape(cache)[1] + tf.shape(X)[1],
        max_len,
        message=marked(
            f"X must have at most max_len = {max_len} positions with the cached ones; "
            "got more inside a TensorFlow graph: raise max_len"
        ),
    )


# Sequence-to-Sequence Toolkit and Bahdanau Attention: sequence to sequence learning


def _vocab_size(layer):
    """The number of token indices that ``layer`` (an encoder or a decoder) embeds: the size
    of its keras.layers.Embedding ``embedding``; None for a layer without one."""
    return getattr(getattr(layer, "embedding", None), "input_dim", None)


@CHECKS.init("GRU")
def _gru_init(num_hiddens, num_layers, dropout=0):
    check_sizes(num_hiddens=num_hiddens, num_layers=num_layers)
    check_dropout(dropout)


@CHECKS.call("GRU")
def _gru_call(gru, X, state=None, training=None):
    check_float(X=X)
    check_shapes(X=(X, "batch steps inputs"))
    check_built_widths(gru, X=X)
    if state is not None:
        check_float(state=state)
        layers, hiddens = len(gru.grus), gru.num_hiddens
        check_shapes(
            X=(X, "batch steps inputs"), state=(state, f"{layers} batch {hiddens}")
        )


@CHECKS.call("Seq2SeqEncoder")
def _seq2seq_encoder_call(encoder, X, *args, training=None):
    check_steps("X", check_shapes(X=(X, "batch steps")).get("steps"))
    check_token_ids("X", X, _vocab_size(encoder))


@CHECKS.call("Seq2SeqDecoder")
def _seq2seq_plain_decoder_call(layer, X, state, training=None):
    context, hidden = check_context_state(
        X, state, len(layer.rnn.grus), layer.rnn.num_hiddens
    )
    check_float(context=context, hidden=hidden)
    check_token_ids("X", X, _vocab_size(layer))


@CHECKS.call("Seq2SeqDecoder.init_state")
def _seq2seq_plain_decoder_init_state(decoder, enc_outputs, enc_valid_lens=None):
    check_decoder_init(enc_outputs, enc_valid_lens)


@CHECKS.call("Seq2SeqAttentionDecoder")
def _seq2seq_attention_decoder_call(decoder, X, state, training=None):
    check_decoder_call(X, state, _vocab_size(decoder))


@CHECKS.call("sequence_mask")
def _sequence_mask(X, valid_len, value=0):
    X = tf.convert_to_tensor(X)
    if X.shape.rank < 2:
        raise ValueError(f"X must have shape (batch, steps, ...); got {tuple(X.shape)}")
    check_real("value", value, finite=False)
    valid_len = tf.convert_to_tensor(valid_len)
    # None in a traced graph (train_seq2seq checked the batch)
    lengths = _lengths(valid_len)
    if lengths is not None:
        check_lengths("valid_len", lengths)
    if valid_len.shape.rank != 1 or valid_len.shape[0] not in (None, X.shape[0]):
        raise ValueError(
            f"valid_len must have shape (batch,) = ({X.shape[0]},) for X of shape "
            f"{tuple(X.shape)}; got {tuple(valid_len.shape)}"
        )
    return (X, valid_len, value), {}


@CHECKS.call("MaskedSoftmaxCELoss")
def _masked_softmax_ce_loss_call(loss, pred, label, valid_len, training=None):
    check_shapes(
        pred=(pred, "batch steps vocab"),
        label=(label, "batch steps"),
        valid_len=(valid_len, "batch"),
    )
    check_float(pred=pred)
    check_token_ids("label", label, pred.shape[-1])
    # None in a traced graph (train_seq2seq checked the batch)
    lengths = _lengths(valid_len)
    if lengths is not None:
        check_lengths("valid_len", lengths)


def _check_batch(net, batch):
    """One batch of train_seq2seq's data_iter, checked eagerly (the values that the compiled
    step cannot check): shapes, token indices within the vocabularies of net's encoder and
    decoder, valid lengths. Returns the batch as a tuple, and its number of target tokens."""
    X, X_valid_len, Y, Y_valid_len = batch = check_seq2seq_batch(batch)
    for name, ids, layer in (("X", X, net.encoder), ("Y", Y, net.decoder)):
        if _vocab_size(layer) is not None:
            check_token_ids(name, ids, _vocab_size(layer))
    check_lengths("X_valid_len", X_valid_len.numpy())
    lengths = Y_valid_len.numpy()
    check_lengths("Y_valid_len", lengths)
    return batch, lengths.sum()


class _CheckedBatches:
    """train_seq2seq's data_iter, read once per epoch as it is: each batch is checked
    (:func:`_check_batch`) as it is read, before its compiled step, and an epoch without
    target tokens (a loss of 0 / 0) raises check_epoch_tokens' ValueError."""

    def __init__(self, net, data_iter):
        self.net, self.data_iter, self.epoch = net, data_iter, 0

    def __iter__(self):
        tokens = 0
        for batch in self.data_iter:
            batch, batch_tokens = _check_batch(self.net, batch)
            tokens += batch_tokens
            yield batch
        check_epoch_tokens(self.epoch, tokens)
        self.epoch += 1


@CHECKS.call("train_seq2seq")
def _train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    check_int("num_epochs", num_epochs, minimum=1)
    check_real("lr", lr, minimum=0)
    check_vocab("tgt_vocab", tgt_vocab, ("<bos>",))
    batches = _CheckedBatches(net, data_iter)  # checks each batch as training reads it
    return (net, batches, lr, num_epochs, tgt_vocab, device), {}


@CHECKS.call("predict_seq2seq")
def _predict_seq2seq(
    net,
    src_sentence,
    src_vocab,
    tgt_vocab,
    num_steps,
    device,
    save_attention_weights=False,
):
    check_int("num_steps", num_steps, minimum=1)
    check_vocab("tgt_vocab", tgt_vocab, ("<bos>", "<eos>"))
    src, _ = encode_source(
        src_sentence, src_vocab, num_steps
    )  # checks the sentence, src_vocab
    check_translation_ids(net, src, tgt_vocab["<bos>"], _vocab_size)
    check_attention_to_save(net, save_attention_weights)


# The Transformer


@CHECKS.call("PositionWiseFFN")
def _position_wise_ffn_call(ffn, X, training=None):
    check_float(X=X)
    check_built_widths(ffn, X=X)


@CHECKS.init("AddNorm")
def _add_norm_init(dropout):
    check_dropout(dropout)


@CHECKS.call("AddNorm")
def _add_norm_call(layer, X, Y, training=None):
    check_float(X=X, Y=Y)
    check_add_norm(layer, X, Y)  # X the width built for, Y the shape of X


def _width(block):
    """A Transformer block's num_hiddens: the size of its FFN's outputs."""
    return block.ffn.dense2.units


@CHECKS.call("TransformerEncoderBlock")
def _transformer_encoder_block_call(block, X, valid_lens=None, training=None):
    check_float(X=X)
    check_width("X", X.shape, _width(block))
    if valid_lens is not None:  # checked here once, not by the attention
        valid_lens = _valid_lens(valid_lens, dict(X=(X, "batch n_q num_hiddens")))
    return (block, X, valid_lens), {"training": training}


@CHECKS.call("TransformerDecoderBlock")
def _transformer_decoder_block_call(
    block, X, enc_outputs, enc_valid_lens=None, cache=None, training=None
):
    check_float(X=X, enc_outputs=enc_outputs)
    batch = check_width("X", X.shape, _width(block))[0]
    check_width("enc_outputs", enc_outputs.shape, _width(block), batch)
    if cache is not None:
        check_width("cache", cache.shape, _width(block), batch)
    if enc_valid_lens is not None:  # checked here once, not by the cross-attention
        shapes = dict(X=(X, "batch n_q num_hiddens"))
        enc_valid_lens = _valid_lens(enc_valid_lens, shapes, name="enc_valid_lens")
    return (block, X, enc_outputs, enc_valid_lens, cache), {"training": training}


def _token_positions(layer, X, offset):
    """For the token indices X (batch, steps) that ``layer`` (a Transformer encoder or
    decoder) places at positions offset, ..., offset + steps - 1 of its pos_encoding's
    table: they must fit in it (PositionalEncoding's check, for the embeddings' shape)."""
    _, max_len, num_hiddens = layer.pos_encoding.P.shape
    embeddings = types.SimpleNamespace(shape=(*X.shape, num_hiddens))  # their shape
    if check_positions(embeddings, num_hiddens, offset, max_len) is None:  # tf.function
        _assert_positions_fit(X, offset, max_len)


@CHECKS.call("TransformerEncoder")
def _transformer_encoder_call(encoder, X, valid_lens=None, training=None):
    check_shapes(X=(X, "batch steps"))
    check_token_ids("X", X, _vocab_size(encoder))
    _token_positions(encoder, X, 0)
    if valid_lens is not None:  # checked here once, not by each block
        valid_lens = _valid_lens(valid_lens, dict(X=(X, "batch n_q")))
    return (encoder, X, valid_lens), {"training": training}


@CHECKS.call("TransformerDecoder")
def _transformer_decoder_call(decoder, X, state, training=None):
    check_shapes(X=(X, "batch steps"))
    check_token_ids("X", X, _vocab_size(decoder))
    past = check_decoder_state(state, decoder.num_layers, decoder.num_hiddens, X.shape[0])
    enc_outputs, enc_valid_lens, caches = state
    if past is not None:
        _token_positions(decoder, X, past)
    else:  # caches of a length known only when the graph runs (predict_seq2seq's graphs)
        _assert_cached_positions_fit(X, caches[0], decoder.pos_encoding.P.shape[1])
    if enc_valid_lens is not None:  # checked here once, not by each block
        shapes = dict(X=(X, "batch n_q"))
        enc_valid_lens = _valid_lens(enc_valid_lens, shapes, name="enc_valid_lens")
    return (decoder, X, (enc_outputs, enc_valid_lens, caches)), {"training": training}


@CHECKS.call("Seq2SeqAttentionDecoder.init_state")
def _seq2seq_decoder_init_state(decoder, enc_outputs, enc_valid_lens):
    check_decoder_init(enc_outputs, enc_valid_lens)


@CHECKS.call("TransformerDecoder.init_state")
def _transformer_decoder_init_state(decoder, enc_outputs, enc_valid_lens=None):
    state = (enc_outputs, enc_valid_lens, (None,) * decoder.num_layers)
    check_decoder_state(state, decoder.num_layers, decoder.num_hiddens)
