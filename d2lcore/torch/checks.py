"""Checks of PyTorch tensors' dtypes and contents: the framework facts behind the messages
of :mod:`d2lcore.checks`."""

import weakref

import torch

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
    (d2lcore.boundary); returns the class, or the checked function."""
    return CHECKS.checked(obj)


def check_float(**tensors):
    """Check that each keyword's value is a floating-point PyTorch tensor."""
    for name, X in tensors.items():
        if not torch.is_tensor(X):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(X).__name__}")
        if not X.dtype.is_floating_point:
            raise dtype_error(name, X.dtype, "a floating-point")


def check_token_ids(name, X, vocab_size):
    """Check that X holds integer token indices 0 ... vocab_size - 1: one reduction and
    one wait for the device per call."""
    if not torch.is_tensor(X):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(X).__name__}")
    if X.dtype.is_floating_point or X.dtype.is_complex or X.dtype == torch.bool:
        raise dtype_error(name, X.dtype, "an integer")
    if bool(((X < 0) | (X >= vocab_size)).any()):
        raise token_ids_error(name, X.cpu().numpy(), vocab_size)


# The last valid_lens checked: (a weak reference to it, its version, whether a length is 0)
_last_lengths = (None, None, None)


def check_valid_lens(name, valid_lens):
    """Check that the tensor ``valid_lens`` holds lengths (whole numbers >= 0) and return
    whether one of them is 0. The values are read on the host, which waits for the
    device: a layer checks once, at its entry, and a tensor just checked (the same object,
    not modified since: the layers of a Transformer share one) is not read again."""
    global _last_lengths
    try:
        version = valid_lens._version  # counts the in-place changes
    except RuntimeError:  # a tensor made in torch.inference_mode() has no counter
        version = None
    ref, last_version, has_zero = _last_lengths
    if version is not None and ref is not None and ref() is valid_lens:
        if version == last_version:
            return has_zero
    lengths = valid_lens.cpu().numpy()
    check_lengths(name, lengths)
    has_zero = bool((lengths == 0).any())
    _last_lengths = (weakref.ref(valid_lens), version, has_zero)
    return has_zero


def _lengths(lens):
    """lens (a tensor) as NumPy, for the neutral checks."""
    return lens.cpu().numpy()


check_decoder_init, check_decoder_call = checks.decoder_checks(check_token_ids, _lengths)


# --- the checks of the taught classes and functions, by taught name (d2lcore.boundary) ---------------------
#
# A call check that converts valid_lens (a list, say) to a tensor returns the arguments to pass on.


def _as_lengths(valid_lens, like):
    """valid_lens as a tensor (None stays None), on the device of the tensor ``like``."""
    if valid_lens is None or torch.is_tensor(valid_lens):
        return valid_lens
    return torch.as_tensor(valid_lens, device=like.device)


def _attention_call(layer, queries, keys, values, valid_lens, specs, built=()):
    """The call check of an attention layer: queries (batch, n_q, *), keys (batch, n_k, *)
    (``specs``: their shapes) and values (batch, n_k, d_v) floats, the inputs named in
    ``built`` of the width the layer was built for, valid_lens None, (batch,) or
    (batch, n_q) lengths. Returns the arguments to pass on, valid_lens as a tensor."""
    queries_spec, keys_spec = specs
    shapes = dict(
        queries=(queries, queries_spec),
        keys=(keys, keys_spec),
        values=(values, "batch n_k d_v"),
    )
    valid_lens = _as_lengths(valid_lens, queries)
    if valid_lens is not None:
        shapes["valid_lens"] = (valid_lens, valid_lens_spec(valid_lens, "n_q"))
    check_shapes(**shapes)
    check_float(queries=queries, keys=keys, values=values)
    if built:
        inputs = dict(queries=queries, keys=keys, values=values)
        check_built_widths(layer, **{name: inputs[name] for name in built})
    if valid_lens is not None:  # once here, not again by the layers inside
        check_valid_lens("valid_lens", valid_lens)
    return (layer, queries, keys, values, valid_lens), {}


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


@CHECKS.call("AdditiveAttention")
def _additive_attention_call(layer, queries, keys, values, valid_lens=None):
    specs = ("batch n_q d_q", "batch n_k d_k")
    built = ("queries", "keys")
    return _attention_call(layer, queries, keys, values, valid_lens, specs, built)


@CHECKS.call("DotProductAttention")
def _dot_product_attention_call(layer, queries, keys, values, valid_lens=None):
    specs = ("batch n_q d", "batch n_k d")
    return _attention_call(layer, queries, keys, values, valid_lens, specs)


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
    specs = ("batch n_q d_q", "batch n_k d_k")
    built = ("queries", "keys", "values")
    return _attention_call(layer, queries, keys, values, valid_lens, specs, built)


@CHECKS.call("PositionalEncoding")
def _positional_encoding_call(layer, X, offset=0):
    _, max_len, num_hiddens = layer.P.shape  # the table: (1, max_len, num_hiddens)
    check_positions(X, num_hiddens, offset, max_len)
    check_float(X=X)


@CHECKS.call("NWKernelRegression")
def _nw_kernel_regression_call(layer, queries, keys, values):
    check_shapes(queries=(queries, "n"), keys=(keys, "n m"), values=(values, "n m"))
    check_float(queries=queries, keys=keys, values=values)


@CHECKS.call("train_nw")
def _train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    # targets of shape (n, 1) would silently broadcast against the predictions
    n = check_shapes(
        queries=(queries, "n"),
        keys=(keys, "n m"),
        values=(values, "n m"),
        targets=(targets, "n"),
    ).get("n")
    check_training_points(n)
    check_float(queries=queries, keys=keys, values=values, targets=targets)
    check_real("lr", lr, minimum=0)
    check_int("num_epochs", num_epochs, minimum=1)


# --- Sequence-to-Sequence Toolkit, Bahdanau Attention: the encoder–decoder, the loss, training, translation --


@CHECKS.call("Seq2SeqEncoder")
def _seq2seq_encoder_call(layer, X, *args):
    check_steps("X", check_shapes(X=(X, "batch steps")).get("steps"))
    check_token_ids("X", X, layer.embedding.num_embeddings)


@CHECKS.call("Seq2SeqDecoder")
def _seq2seq_plain_decoder_call(layer, X, state):
    context, hidden = check_context_state(
        X, state, layer.rnn.num_layers, layer.rnn.hidden_size
    )
    check_float(context=context, hidden=hidden)
    check_token_ids("X", X, layer.embedding.num_embeddings)


@CHECKS.call("Seq2SeqDecoder.init_state")
def _seq2seq_plain_decoder_init_state(decoder, enc_outputs, enc_valid_lens=None):
    check_decoder_init(enc_outputs, enc_valid_lens)


@CHECKS.call("Seq2SeqAttentionDecoder")
def _seq2seq_decoder_call(layer, X, state):
    check_decoder_call(X, state, layer.embedding.num_embeddings)


@CHECKS.call("TransformerDecoder.init_state")
def _transformer_decoder_init_state(decoder, enc_outputs, enc_valid_lens=None):
    state = (enc_outputs, enc_valid_lens, (None,) * len(decoder.blks))
    check_decoder_state(state, len(decoder.blks), decoder.num_hiddens)


@CHECKS.call("Seq2SeqAttentionDecoder.init_state")
def _seq2seq_decoder_init_state(decoder, enc_outputs, enc_valid_lens):
    check_decoder_init(enc_outputs, enc_valid_lens)


@CHECKS.call("sequence_mask")
def _sequence_mask(X, valid_len, value=0):
    if not torch.is_tensor(X):
        raise TypeError(f"X must be a torch.Tensor; got {type(X).__name__}")
    if X.dim() < 2:
        raise ValueError(f"X must have shape (batch, steps, ...); got {tuple(X.shape)}")
    check_real("value", value, finite=False)
    valid_len = torch.as_tensor(valid_len, device=X.device)
    check_lengths("valid_len", _lengths(valid_len))
    if tuple(valid_len.shape) != (X.shape[0],):
        raise ValueError(
            f"valid_len must have shape (batch,) = ({X.shape[0]},) for X of shape "
            f"{tuple(X.shape)}; got {tuple(valid_len.shape)}"
        )
    return (X, valid_len, value), {}


@CHECKS.call("MaskedSoftmaxCELoss")
def _masked_softmax_ce_loss_call(layer, pred, label, valid_len):
    check_shapes(
        pred=(pred, "batch steps vocab"),
        label=(label, "batch steps"),
        valid_len=(valid_len, "batch"),
    )
    check_float(pred=pred)
    check_token_ids("label", label, pred.shape[-1])
    check_valid_lens("valid_len", valid_len)


def _on_host(X):
    """X's values as NumPy: without a wait where X lives on the CPU (as load_data_nmt's
    batches do, before the training loop copies them to the device)."""
    if not torch.is_tensor(X):
        raise TypeError(
            "each batch of data_iter must be 4 tensors (X, X_valid_len, Y, Y_valid_len); "
            f"got a {type(X).__name__} in one"
        )
    X = X.detach()
    return X.numpy() if X.device.type == "cpu" else X.cpu().numpy()


class _CheckedBatches:
    """``data_iter`` for train_seq2seq, whose batches are checked as they come, on the host
    where they live, before the loop copies them to the device: each is (X, X_valid_len,
    Y, Y_valid_len) (check_seq2seq_batch); X and Y hold token indices of the encoder's and
    the decoder's embeddings; the lengths are lengths; every epoch has target tokens.
    Inside train_seq2seq the model's own checks do not run (d2lcore.boundary)."""

    def __init__(self, data_iter, net):
        self.data_iter, self.epoch = data_iter, 0
        self.vocab_sizes = {
            name: getattr(getattr(part, "embedding", None), "num_embeddings", None)
            for name, part in (("X", net.encoder), ("Y", net.decoder))
        }

    def __iter__(self):
        tokens = 0
        for batch in self.data_iter:
            batch = check_seq2seq_batch(batch)  # shapes first
            X, X_valid_len, Y, Y_valid_len = (_on_host(t) for t in batch)
            for name, ids in (("X", X), ("Y", Y)):
                if ids.dtype.kind not in "iu":
                    raise dtype_error(name, ids.dtype, "an integer")
                size = self.vocab_sizes[name]
                if size is not None and ((ids < 0) | (ids >= size)).any():
                    raise token_ids_error(name, ids, size)
            check_lengths("X_valid_len", X_valid_len)
            check_lengths("Y_valid_len", Y_valid_len)
            tokens += int(Y_valid_len.sum())
            yield batch
        check_epoch_tokens(self.epoch, tokens)
        self.epoch += 1


@CHECKS.call("train_seq2seq")
def _train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    check_int("num_epochs", num_epochs, minimum=1)
    check_real("lr", lr, minimum=0)
    check_vocab("tgt_vocab", tgt_vocab, ("<bos>",))
    data_iter = _CheckedBatches(data_iter, net)
    return (net, data_iter, lr, num_epochs, tgt_vocab, device), {}


def _vocab_size(part):
    """The number of token indices that ``part`` (an encoder or a decoder) embeds: the rows of
    its nn.Embedding ``embedding``; None for a part without one."""
    return getattr(getattr(part, "embedding", None), "num_embeddings", None)


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


# --- The Transformer ---------------------------------------------------------------------------------------
#
# The blocks' inner layers (attention, AddNorm, FFN, positional encoding) are built and called inside a checked
# call, so not checked again: the checks of a block, an encoder or a decoder check their arguments too.


class _Shape:
    """Something of shape ``shape``, for the checks that look at shapes only."""

    def __init__(self, shape):
        self.shape = shape


@CHECKS.call("PositionWiseFFN")
def _position_wise_ffn_call(layer, X):
    check_float(X=X)
    check_built_widths(layer, X=X)


@CHECKS.init("AddNorm")
def _add_norm_init(num_hiddens, dropout):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_dropout(dropout)


@CHECKS.call("AddNorm")
def _add_norm_call(layer, X, Y):
    check_float(X=X, Y=Y)
    # num_hiddens, the width of nn.LayerNorm
    (width,) = layer.ln.normalized_shape
    if tuple(X.shape[-1:]) != (width,):
        raise ValueError(
            f"X's last dimension must be num_hiddens = {width}, the width this AddNorm was "
            f"built for; got X of shape {tuple(X.shape)}"
        )
    check_add_norm(layer, X, Y)  # Y the shape of X


def _width(block):
    """A Transformer block's num_hiddens: the size of its attention's output."""
    return block.ffn.dense2.out_features


def _lengths_for(valid_lens, X, name, queries="steps"):
    """valid_lens (None, or (batch,) or (batch, ``queries``) lengths, checked once) for X
    (batch, steps, ...), as a tensor."""
    valid_lens = _as_lengths(valid_lens, X)
    if valid_lens is not None:
        spec = valid_lens_spec(valid_lens, queries)
        check_shapes(
            X=(X, f"batch steps{' h' * (X.dim() - 2)}"), **{name: (valid_lens, spec)}
        )
        check_valid_lens(name, valid_lens)
    return valid_lens


@CHECKS.call("TransformerEncoderBlock")
def _transformer_encoder_block_call(layer, X, valid_lens=None):
    check_float(X=X)
    check_width("X", X.shape, _width(layer))
    check_built_widths(layer.attention, queries=X, keys=X, values=X)
    return (layer, X, _lengths_for(valid_lens, X, "valid_lens")), {}


@CHECKS.call("TransformerEncoder")
def _transformer_encoder_call(layer, X, valid_lens=None):
    batch, steps = check_shapes(X=(X, "batch steps")).values()
    check_token_ids("X", X, layer.embedding.num_embeddings)
    _, max_len, num_hiddens = layer.pos_encoding.P.shape
    check_positions(_Shape((batch, steps, num_hiddens)), num_hiddens, 0, max_len)
    return (layer, X, _lengths_for(valid_lens, X, "valid_lens")), {}


def _decoder_block_inputs(block, X, enc_outputs, enc_valid_lens, cache):
    """The checks of a TransformerDecoderBlock's inputs (see its docstring)."""
    check_float(X=X, enc_outputs=enc_outputs)
    num_hiddens = _width(block)
    batch = check_width("X", X.shape, num_hiddens)[0]
    check_width("enc_outputs", enc_outputs.shape, num_hiddens, batch)
    if cache is not None:
        check_width("cache", cache.shape, num_hiddens, batch)
        check_float(cache=cache)
    enc_valid_lens = _as_lengths(enc_valid_lens, X)
    if enc_valid_lens is not None:
        check_shapes(X=(X, "batch steps h"), enc_valid_lens=(enc_valid_lens, "batch"))
        check_valid_lens("enc_valid_lens", enc_valid_lens)
    return enc_valid_lens


@CHECKS.call("TransformerDecoderBlock")
def _transformer_decoder_block_call(
    layer, X, enc_outputs, enc_valid_lens=None, cache=None
):
    enc_valid_lens = _decoder_block_inputs(layer, X, enc_outputs, enc_valid_lens, cache)
    return (layer, X, enc_outputs, enc_valid_lens, cache), {}


@CHECKS.call("TransformerDecoder")
def _transformer_decoder_call(layer, X, state):
    batch, steps = check_shapes(X=(X, "batch steps")).values()
    check_token_ids("X", X, layer.embedding.num_embeddings)
    num_layers, num_hiddens = len(layer.blks), layer.num_hiddens
    past = check_decoder_state(state, num_layers, num_hiddens, batch)
    _, max_len, _ = layer.pos_encoding.P.shape
    check_positions(_Shape((batch, steps, num_hiddens)), num_hiddens, past, max_len)
    enc_outputs, enc_valid_lens, caches = state
    check_float(enc_outputs=enc_outputs)
    if enc_valid_lens is not None:
        check_valid_lens("enc_valid_lens", enc_valid_lens)
