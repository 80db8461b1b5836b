"""Checks of MXNet arrays' dtypes and contents: the framework facts behind the messages of
:mod:`d2lcore.checks`."""

import numpy as onp
from mxnet import np

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


# Section 2: Nadaraya-Watson kernel regression


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


# Section 3: masked softmax, additive and scaled dot-product attention


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


@CHECKS.init("AdditiveAttention")
def _additive_attention_init(num_hiddens, dropout):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_dropout(dropout)


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


@CHECKS.init("DotProductAttention")
def _dot_product_attention_init(dropout):
    check_dropout(dropout)


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


# Section 6: multi-head attention


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


def attention_lengths(queries, keys, valid_lens=None):
    """valid_lens (None, (batch,) or (batch, n_q)) checked against queries (batch, n_q,
    d_q), as MultiHeadAttention's graph reads them: (batch, n_q) int32 lengths, at most
    n_k, the number of keys (batch, n_k, d_k): MXNet's softmax with lengths reads a larger
    one as garbage. None gives n_k, every key."""
    valid_lens = _check_attention_lengths(queries, valid_lens)
    (batch, n_q), n_k = queries.shape[:2], keys.shape[1]
    if valid_lens is None:
        return np.full((batch, n_q), n_k, dtype="int32", ctx=queries.ctx)
    lens = np.minimum(valid_lens.reshape(batch, -1), n_k)  # (batch, 1 or n_q)
    return np.broadcast_to(lens, (batch, n_q)).astype("int32")


@CHECKS.init("MultiHeadAttention")
def _multihead_attention_init(num_hiddens, num_heads, dropout, bias=False):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_heads(num_hiddens, num_heads)
    check_dropout(dropout)
    check_bool("bias", bias)


@CHECKS.call("MultiHeadAttention")
def _multihead_attention_call(layer, queries, keys, values, valid_lens=None):
    if not isinstance(queries, np.ndarray):  # symbols: in a hybridized parent's graph,
        return None  # whose forward checked the inputs (attention_lengths)
    check_shapes(
        queries=(queries, "batch n_q d_q"),
        keys=(keys, "batch n_k d_k"),
        values=(values, "batch n_k d_v"),
    )
    check_float(queries=queries, keys=keys, values=values)
    check_built_widths(layer, queries=queries, keys=keys, values=values)
    valid_lens = attention_lengths(queries, keys, valid_lens)
    return (layer, queries, keys, values, valid_lens), {}


# Section 7: positional encoding


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
