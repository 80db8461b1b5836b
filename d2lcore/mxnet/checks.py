"""Checks of MXNet arrays' dtypes and contents: the framework facts behind the messages of
:mod:`d2lcore.checks`; and the argument checks of the taught classes and functions, registered
by taught name on :data:`CHECKS` and attached with :func:`checked` (d2lcore.boundary)."""

import functools
import inspect
import types

import numpy as onp
from mxnet import np
from mxnet.gluon import nn

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

CHECKS = Checks()
"""The argument checks of this framework's taught classes and functions, by taught name (d2lcore.boundary)."""


def checked(obj):
    """Attach the checks of ``CHECKS`` registered under the name of ``obj``, a taught class or function
    (d2lcore.boundary); returns the class, or the checked function.

    A Gluon block also gets what the other frameworks' layers do without help: a call with keyword arguments
    (Gluon's ``Block.__call__`` takes positional ones only; they are bound to the positions of ``forward``),
    and, for the blocks in :data:`GRAPH_LENGTHS`, its valid lengths turned, at every call (checked or not), into
    the ones its graph reads."""
    obj = CHECKS.checked(obj)
    if isinstance(obj, type) and issubclass(obj, nn.Block):
        lengths = GRAPH_LENGTHS.get(obj.__name__)
        if lengths is not None:
            obj.forward = _with_graph_lengths(obj.forward, lengths)
        obj.__call__ = _positional(obj.__call__)
    return obj


def _positional(call):
    """A Gluon block's ``__call__`` that also takes keyword arguments: it binds them to the positions of
    the block's ``forward`` (its defaults included)."""

    @functools.wraps(call)
    def __call__(self, *args, **kwargs):
        if kwargs:
            bound = inspect.signature(self.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        return call(self, *args)

    return __call__


def _with_graph_lengths(forward, lengths):
    """``forward`` that first gives its arguments to ``lengths`` (arrays, not a graph's symbols)."""

    @functools.wraps(forward)
    def with_lengths(self, *args):
        if isinstance(args[0], np.ndarray):
            args = lengths(*args)
        return forward(self, *args)

    return with_lengths


def attention_lengths(queries, keys, valid_lens=None):
    """The valid lengths as MultiHeadAttention's graph reads them: (batch, n_q) int32, at
    most n_k (MXNet's softmax with lengths reads a larger one as garbage). queries (batch,
    n_q, d_q), keys (batch, n_k, d_k), valid_lens None (every key), or (batch,) or (batch,
    n_q) lengths, an mxnet.np array (the checks make it so)."""
    (batch, n_q), n_k = queries.shape[:2], keys.shape[1]
    if valid_lens is None:
        return np.full((batch, n_q), n_k, dtype="int32", ctx=queries.ctx)
    lens = np.minimum(valid_lens.reshape(batch, -1), n_k)  # (batch, 1 or n_q)
    return np.broadcast_to(lens, (batch, n_q)).astype("int32")


GRAPH_LENGTHS = {
    # X, valid_lens: the self-attention's keys are X
    "TransformerEncoderBlock": lambda X, valid_lens=None: (
        X,
        attention_lengths(X, X, valid_lens),
    ),
    # the encoder–decoder attention's keys are enc_outputs
    "TransformerDecoderBlock": lambda X, enc_outputs, enc_valid_lens=None, cache=None: (
        X,
        enc_outputs,
        attention_lengths(X, enc_outputs, enc_valid_lens),
        cache,
    ),
}
"""For the Transformer's blocks, hybridized: the valid lengths that their forward hands to the
MultiHeadAttention layers of their graph, by taught name: f(forward's arguments) -> forward's
arguments with lengths of shape (batch, queries) int32, at most the number of keys (see
attention_lengths). Outside a checked call (a block inside the encoder or the decoder), the
block's own checks do not run, but its graph still needs these."""


def check_float(**tensors):
    """Check that each keyword's value is a floating-point ``mxnet.np`` array."""
    for name, X in tensors.items():
        if not isinstance(X, np.ndarray):
            raise TypeError(f"{name} must be an mxnet.np.ndarray; got {type(X).__name__}")
        if not onp.issubdtype(X.dtype, onp.floating):
            raise dtype_error(name, X.dtype, "a floating-point")


def check_token_ids(name, X, vocab_size):
    """Check that X holds integer token indices 0 ... vocab_size - 1 (MXNet's embeddings
    and losses would clamp the others silently). X is read on the host, which waits only
    for the operations that write X (none for a batch of data), not for MXNet's whole
    queue as a reduction on the device would."""
    if not isinstance(X, np.ndarray):
        raise TypeError(f"{name} must be an mxnet.np.ndarray; got {type(X).__name__}")
    if not onp.issubdtype(X.dtype, onp.integer):
        raise dtype_error(name, X.dtype, "an integer")
    ids = X.asnumpy()
    if ids.size and ((ids < 0) | (ids >= vocab_size)).any():
        raise token_ids_error(name, ids, vocab_size)


def check_valid_lens(name, valid_lens):
    """Check that the array ``valid_lens`` holds lengths, whole numbers >= 0; return
    whether one is 0. Reading them waits only for the operations that write valid_lens
    (usually none: it comes from the data), not for the rest of MXNet's queue; a layer
    checks once, at its entry."""
    lengths = valid_lens.asnumpy()
    check_lengths(name, lengths)
    return bool((lengths == 0).any())


def _lengths(lens):
    """lens (an mxnet.np.ndarray) as NumPy, for the neutral checks."""
    return lens.asnumpy()


check_decoder_init, check_decoder_call = checks.decoder_checks(check_token_ids, _lengths)


# --- the checks of the taught classes and functions, by taught name (d2lcore.boundary) ---------------------


def _as_lengths(valid_lens, like):
    """valid_lens (a list of lengths, say) as an mxnet.np array on ``like``'s device."""
    if valid_lens is None or isinstance(valid_lens, np.ndarray):
        return valid_lens
    return np.array(valid_lens, ctx=getattr(like, "ctx", None))


# Attention Pooling: Nadaraya–Watson Kernel Regression


@CHECKS.call("NWKernelRegression")
def _nw_kernel_regression_call(net, queries, keys, values):
    check_shapes(queries=(queries, "n"), keys=(keys, "n m"), values=(values, "n m"))
    check_float(queries=queries, keys=keys, values=values)


@CHECKS.call("train_nw")
def _train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    # targets of shape (n, 1) would silently broadcast against the predictions
    n = check_shapes(queries=(queries, "n"), targets=(targets, "n")).get("n")
    check_training_points(n)
    check_float(targets=targets)
    check_real("lr", lr, minimum=0)
    check_int("num_epochs", num_epochs, minimum=1)
    # The model's arguments: net's own checks do not run inside train_nw
    _nw_kernel_regression_call(net, queries, keys, values)


# Attention Scoring Functions: masked softmax, additive and scaled dot-product attention


@CHECKS.call("masked_softmax")
def _masked_softmax(X, valid_lens):
    check_float(X=X)
    if valid_lens is None:
        check_shapes(X=(X, "batch queries keys"))
        return None
    valid_lens = _as_lengths(valid_lens, X)
    spec = valid_lens_spec(valid_lens)  # (batch,) or (batch, queries)
    check_shapes(X=(X, "batch queries keys"), valid_lens=(valid_lens, spec))
    check_valid_lens("valid_lens", valid_lens)
    return (X, valid_lens), {}


def _check_attention_lengths(queries, valid_lens):
    """valid_lens None, (batch,) or (batch, n_q), checked against queries (batch, n_q, d);
    returns it as an array."""
    if valid_lens is None:
        return None
    valid_lens = _as_lengths(valid_lens, queries)
    check_shapes(
        queries=(queries, "batch n_q d_q"),
        valid_lens=(valid_lens, valid_lens_spec(valid_lens, "n_q")),
    )
    check_valid_lens("valid_lens", valid_lens)
    return valid_lens


@CHECKS.call("AdditiveAttention")
def _additive_attention_call(layer, queries, keys, values, valid_lens=None):
    check_shapes(
        queries=(queries, "batch n_q d_q"),
        keys=(keys, "batch n_k d_k"),
        values=(values, "batch n_k d_v"),
    )
    check_float(queries=queries, keys=keys, values=values)
    check_built_widths(layer, queries=queries, keys=keys)
    valid_lens = _check_attention_lengths(queries, valid_lens)
    return (layer, queries, keys, values, valid_lens), {}


@CHECKS.call("DotProductAttention")
def _dot_product_attention_call(layer, queries, keys, values, valid_lens=None):
    shapes = dict(
        queries=(queries, "batch n_q d"),
        keys=(keys, "batch n_k d"),
        values=(values, "batch n_k d_v"),
    )
    valid_lens = _as_lengths(valid_lens, queries)
    if valid_lens is not None:
        shapes["valid_lens"] = (valid_lens, valid_lens_spec(valid_lens, "n_q"))
    check_shapes(**shapes)
    check_float(queries=queries, keys=keys, values=values)
    if valid_lens is not None:
        check_valid_lens("valid_lens", valid_lens)
    return (layer, queries, keys, values, valid_lens), {}


# Multi-Head Attention


@CHECKS.call("transpose_qkv")
def _transpose_qkv(X, num_heads):
    dims = check_shapes(X=(X, "batch n num_hiddens"))
    check_heads(dims["num_hiddens"], num_heads)


@CHECKS.call("transpose_output")
def _transpose_output(X, num_heads):
    check_int("num_heads", num_heads, minimum=1)
    dims = check_shapes(X=(X, "batch_heads n d"))
    if dims["batch_heads"] % num_heads:
        raise ValueError(
            f"X's first dimension ({dims['batch_heads']}) must be a multiple of "
            f"num_heads ({num_heads}): it holds batch * num_heads rows; got X of shape "
            f"{tuple(X.shape)}"
        )


@CHECKS.call("MultiHeadAttention")
def _multihead_attention_call(layer, queries, keys, values, valid_lens=None):
    if not isinstance(queries, np.ndarray):  # symbols: in a hybridized parent's graph,
        return None  # whose forward gave the lengths as the graph reads them
    check_shapes(
        queries=(queries, "batch n_q d_q"),
        keys=(keys, "batch n_k d_k"),
        values=(values, "batch n_k d_v"),
    )
    check_float(queries=queries, keys=keys, values=values)
    check_built_widths(layer, queries=queries, keys=keys, values=values)
    valid_lens = _check_attention_lengths(queries, valid_lens)
    # (batch, n_q) int32, at most n_k: the lengths that MultiHeadAttention's graph reads
    valid_lens = attention_lengths(queries, keys, valid_lens)
    return (layer, queries, keys, values, valid_lens), {}


# Self-Attention and Positional Encoding: positional encoding


@CHECKS.call("PositionalEncoding")
def _positional_encoding_call(layer, X, offset=0):
    _, max_len, num_hiddens = layer.P.shape  # the table: (1, max_len, num_hiddens)
    check_positions(X, num_hiddens, offset, max_len)
    check_float(X=X)


# Sequence-to-Sequence Toolkit: the encoder, the masked loss, training and translation (Bahdanau
# Attention: the Bahdanau decoder)


def _vocab_size(layer):
    """The number of token indices that ``layer`` (an encoder or a decoder) embeds: the rows of
    its ``embedding``, an nn.Embedding (input_dim, output_dim), known before the first call;
    None for a layer without one."""
    embedding = getattr(layer, "embedding", None)
    return embedding.weight.shape[0] if isinstance(embedding, nn.Embedding) else None


def _host(X):
    """X, an mxnet.np array (or a NumPy one), as NumPy: read on the host, which waits only for
    the operations that write X (none for a batch of data)."""
    return X.asnumpy() if isinstance(X, np.ndarray) else onp.asarray(X)


def _check_positions_fit(encoding, batch, steps, offset=0):
    """The check of the PositionalEncoding ``encoding`` for the embeddings (batch, steps,
    num_hiddens) of ``steps`` tokens at positions offset, ..., offset + steps - 1: the layer
    that calls it is checked, so the encoding's own check does not run."""
    _, max_len, num_hiddens = encoding.P.shape  # the table: (1, max_len, num_hiddens)
    embeddings = types.SimpleNamespace(shape=(batch, steps, num_hiddens))  # their shape
    check_positions(embeddings, num_hiddens, offset, max_len)


@CHECKS.call("Seq2SeqEncoder")
def _seq2seq_encoder_call(encoder, X, *args):
    # no steps: MXNet's GRU would crash the process
    check_steps("X", check_shapes(X=(X, "batch steps")).get("steps"))
    check_token_ids("X", X, _vocab_size(encoder))


@CHECKS.call("Seq2SeqAttentionDecoder.init_state")
def _seq2seq_decoder_init_state(decoder, enc_outputs, enc_valid_lens):
    check_decoder_init(enc_outputs, enc_valid_lens)


@CHECKS.call("Seq2SeqDecoder")
def _seq2seq_plain_decoder_call(layer, X, state):
    context, hidden = check_context_state(
        X, state, layer.rnn._num_layers, layer.rnn._hidden_size
    )
    check_float(context=context, hidden=hidden)
    check_token_ids("X", X, _vocab_size(layer))


@CHECKS.call("Seq2SeqDecoder.init_state")
def _seq2seq_plain_decoder_init_state(decoder, enc_outputs, enc_valid_lens=None):
    check_decoder_init(enc_outputs, enc_valid_lens)


@CHECKS.call("Seq2SeqAttentionDecoder")
def _seq2seq_decoder_call(decoder, X, state):
    enc_outputs, _, _ = check_decoder_call(X, state, _vocab_size(decoder))
    check_float(enc_outputs=enc_outputs)
    check_built_widths(decoder.attention, keys=enc_outputs)


@CHECKS.call("sequence_mask")
def _sequence_mask(X, valid_len, value=0):
    if not isinstance(X, np.ndarray):
        raise TypeError(f"X must be an mxnet.np.ndarray; got {type(X).__name__}")
    if X.ndim < 2:
        raise ValueError(f"X must have shape (batch, steps, ...); got {X.shape}")
    check_real("value", value, finite=False)
    valid_len = _as_lengths(valid_len, X)
    # MXNet's kernel crashes the process on a negative length: check before it runs
    check_lengths("valid_len", valid_len.asnumpy())
    if valid_len.shape != (X.shape[0],):
        raise ValueError(
            f"valid_len must have shape (batch,) = ({X.shape[0]},) for X of shape "
            f"{X.shape}; got {valid_len.shape}"
        )
    return (X, valid_len, value), {}


@CHECKS.call("MaskedSoftmaxCELoss")
def _masked_softmax_ce_loss_call(loss, pred, label, valid_len):
    check_shapes(
        pred=(pred, "batch steps vocab"),
        label=(label, "batch steps"),
        valid_len=(valid_len, "batch"),
    )
    check_float(pred=pred)
    check_token_ids("label", label, pred.shape[-1])
    # sequence_mask's check of the lengths, which does not run inside the loss
    valid_len = _as_lengths(valid_len, pred)
    check_lengths("valid_len", valid_len.asnumpy())
    return (loss, pred, label, valid_len), {}


class _CheckedBatches:
    """train_seq2seq's data_iter, each batch checked as the training loop reads it (the model's
    own checks do not run inside train_seq2seq): (X, X_valid_len, Y, Y_valid_len) of the shapes
    that load_data_nmt gives, token indices that fit the vocabularies of net's encoder (X) and
    decoder (Y), lengths; and target tokens in every epoch, a pass over data_iter. The values
    are read on the host, which waits for nothing: they come from the data."""

    def __init__(self, data_iter, net):
        self.data_iter, self.net, self.epoch = data_iter, net, 0

    def __iter__(self):
        encoder, decoder = (
            getattr(self.net, name, None) for name in ("encoder", "decoder")
        )
        tokens = 0
        for batch in self.data_iter:
            X, X_valid_len, Y, Y_valid_len = batch = check_seq2seq_batch(batch)
            for name, ids, layer in (("X", X, encoder), ("Y", Y, decoder)):
                if _vocab_size(layer) is not None:
                    check_token_ids(name, ids, _vocab_size(layer))
            check_lengths("X_valid_len", _host(X_valid_len))
            lengths = _host(Y_valid_len)
            check_lengths("Y_valid_len", lengths)
            tokens += int(lengths.sum())
            yield batch
        check_epoch_tokens(self.epoch, tokens)  # none would give a loss of 0 / 0
        self.epoch += 1


@CHECKS.call("train_seq2seq")
def _train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    check_int("num_epochs", num_epochs, minimum=1)
    check_real("lr", lr, minimum=0)
    check_vocab("tgt_vocab", tgt_vocab, ("<bos>",))
    return (net, _CheckedBatches(data_iter, net), lr, num_epochs, tgt_vocab, device), {}


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
    src, _ = encode_source(src_sentence, src_vocab, num_steps)  # checks both
    # The model's checks do not run inside predict_seq2seq: the source and <bos> must fit the
    # vocabularies of net's encoder and decoder, num_steps positions their positional encodings
    encoder, decoder = net.encoder, net.decoder
    check_translation_ids(net, src, tgt_vocab["<bos>"], _vocab_size)
    check_attention_to_save(net, save_attention_weights)
    for layer in (encoder, decoder):
        if hasattr(layer, "pos_encoding"):
            _check_positions_fit(layer.pos_encoding, 1, num_steps)


# The Transformer


@CHECKS.call("PositionWiseFFN")
def _position_wise_ffn_call(ffn, X):
    if isinstance(X, np.ndarray):  # not symbols in a hybridized parent's graph
        check_float(X=X)
        check_built_widths(ffn, X=X)


@CHECKS.init("AddNorm")
def _add_norm_init(dropout):
    check_dropout(dropout)


@CHECKS.call("AddNorm")
def _add_norm_call(layer, X, Y):
    if isinstance(X, np.ndarray):  # not symbols in a hybridized parent's graph
        check_float(X=X, Y=Y)
        check_add_norm(layer, X, Y)  # X the width built for, Y the shape of X


def _block_width(block):
    """A Transformer block's num_hiddens: the width of its FFN's output (dense2's weight,
    (num_hiddens, inputs), is known before the first call). The residual connections need
    the inputs to have it too."""
    return block.ffn.dense2.weight.shape[0]


@CHECKS.call("TransformerEncoderBlock")
def _transformer_encoder_block_call(block, X, valid_lens=None):
    check_float(X=X)
    check_width("X", X.shape, _block_width(block))
    valid_lens = _check_attention_lengths(X, valid_lens)
    return (block, X, valid_lens), {}


@CHECKS.call("TransformerDecoderBlock")
def _transformer_decoder_block_call(
    block, X, enc_outputs, enc_valid_lens=None, cache=None
):
    check_float(X=X, enc_outputs=enc_outputs)
    num_hiddens = _block_width(block)
    batch = check_width("X", X.shape, num_hiddens)[0]
    check_width("enc_outputs", enc_outputs.shape, num_hiddens, batch)
    if cache is not None:
        check_width("cache", cache.shape, num_hiddens, batch)
    enc_valid_lens = _check_attention_lengths(X, enc_valid_lens)
    return (block, X, enc_outputs, enc_valid_lens, cache), {}


@CHECKS.call("TransformerEncoder")
def _transformer_encoder_call(encoder, X, valid_lens=None):
    dims = check_shapes(X=(X, "batch steps"))
    check_token_ids("X", X, _vocab_size(encoder))
    _check_positions_fit(encoder.pos_encoding, dims["batch"], dims["steps"])
    if valid_lens is not None:  # None, (batch,) or (batch, steps)
        valid_lens = _as_lengths(valid_lens, X)
        spec = valid_lens_spec(valid_lens, "steps")
        check_shapes(X=(X, "batch steps"), valid_lens=(valid_lens, spec))
        check_valid_lens("valid_lens", valid_lens)
    return (encoder, X, valid_lens), {}


@CHECKS.call("TransformerDecoder.init_state")
def _transformer_decoder_init_state(decoder, enc_outputs, enc_valid_lens=None):
    state = (enc_outputs, enc_valid_lens, (None,) * decoder.num_layers)
    check_decoder_state(state, decoder.num_layers, decoder.num_hiddens)


@CHECKS.call("TransformerDecoder")
def _transformer_decoder_call(decoder, X, state):
    dims = check_shapes(X=(X, "batch steps"))
    check_token_ids("X", X, _vocab_size(decoder))
    past = check_decoder_state(
        state, decoder.num_layers, decoder.num_hiddens, dims["batch"]
    )
    _check_positions_fit(decoder.pos_encoding, dims["batch"], dims["steps"], past)
    enc_outputs, enc_valid_lens, caches = state
    check_float(enc_outputs=enc_outputs)
    if enc_valid_lens is not None:  # (batch,): its shape is checked
        enc_valid_lens = _as_lengths(enc_valid_lens, enc_outputs)
        check_valid_lens("enc_valid_lens", enc_valid_lens)
    return (decoder, X, (enc_outputs, enc_valid_lens, tuple(caches))), {}
