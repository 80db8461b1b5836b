"""Checks of PyTorch tensors' dtypes and contents: the framework facts behind the messages
of :mod:`d2lcore.checks`."""

import weakref

import torch

from d2lcore import checks
from d2lcore.boundary import Checks
from d2lcore.checks import (
    check_bool,
    check_built_widths,
    check_dropout,
    check_heads,
    check_int,
    check_lengths,
    check_positions,
    check_real,
    check_shapes,
    check_training_points,
    dtype_error,
    token_ids_error,
    valid_lens_spec,
)

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


@CHECKS.init("AdditiveAttention")
def _additive_attention_init(num_hiddens, dropout):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_dropout(dropout)


@CHECKS.call("AdditiveAttention")
def _additive_attention_call(layer, queries, keys, values, valid_lens=None):
    specs = ("batch n_q d_q", "batch n_k d_k")
    built = ("queries", "keys")
    return _attention_call(layer, queries, keys, values, valid_lens, specs, built)


@CHECKS.init("DotProductAttention")
def _dot_product_attention_init(dropout):
    check_dropout(dropout)


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


@CHECKS.init("MultiHeadAttention")
def _multihead_attention_init(num_hiddens, num_heads, dropout, bias=False):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_heads(num_hiddens, num_heads)
    check_dropout(dropout)
    check_bool("bias", bias)


@CHECKS.call("MultiHeadAttention")
def _multihead_attention_call(layer, queries, keys, values, valid_lens=None):
    specs = ("batch n_q d_q", "batch n_k d_k")
    built = ("queries", "keys", "values")
    return _attention_call(layer, queries, keys, values, valid_lens, specs, built)


@CHECKS.init("PositionalEncoding")
def _positional_encoding_init(num_hiddens, dropout, max_len=1000):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_int("max_len", max_len, minimum=1)
    check_dropout(dropout)


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
