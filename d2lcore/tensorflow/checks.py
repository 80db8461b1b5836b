"""Checks of TensorFlow tensors' dtypes and contents: the framework facts behind the
messages of :mod:`d2lcore.checks`; and, at the end, the argument checks of the taught
classes and functions, registered by taught name in ``CHECKS`` and attached by ``@checked``
(d2lcore.boundary)."""

import contextlib
import re

import numpy
import tensorflow as tf

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


def _valid_lens(valid_lens, shapes, queries="n_q"):
    """valid_lens made a tensor, its shape (batch,) or (batch, <queries>) checked with the
    ``shapes`` of the other arguments (check_shapes' pairs by name), its values checked
    (check_valid_lens)."""
    valid_lens = tf.convert_to_tensor(valid_lens)
    spec = valid_lens_spec(valid_lens, queries)
    check_shapes(**shapes, valid_lens=(valid_lens, spec))
    check_valid_lens("valid_lens", valid_lens)
    return valid_lens


# Section 2: Nadaraya-Watson kernel regression


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


# Section 3: attention scoring functions


@CHECKS.call("masked_softmax")
def _masked_softmax(X, valid_lens):
    check_float(X=X)
    if valid_lens is None:
        check_shapes(X=(X, "batch queries keys"))
        return None
    return (X, _valid_lens(valid_lens, dict(X=(X, "batch queries keys")), "queries")), {}


@CHECKS.init("AdditiveAttention")
def _additive_attention_init(num_hiddens, dropout):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_dropout(dropout)


@CHECKS.call("AdditiveAttention")
def _additive_attention_call(
    layer, queries, keys, values, valid_lens=None, training=None
):
    shapes = _attention_shapes(queries, keys, values, "d_q", "d_k")
    check_built_widths(layer, queries=queries, keys=keys)
    if valid_lens is not None:
        valid_lens = _valid_lens(valid_lens, shapes)
    return (layer, queries, keys, values, valid_lens), {"training": training}


@CHECKS.init("DotProductAttention")
def _dot_product_attention_init(dropout):
    check_dropout(dropout)


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


# Section 6: multi-head attention


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


@CHECKS.init("MultiHeadAttention")
def _multihead_attention_init(num_hiddens, num_heads, dropout, bias=False):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_heads(num_hiddens, num_heads)
    check_dropout(dropout)
    check_bool("bias", bias)


@CHECKS.call("MultiHeadAttention")
def _multihead_attention_call(
    layer, queries, keys, values, valid_lens=None, training=None
):
    shapes = _attention_shapes(queries, keys, values, "d_q", "d_k")
    check_built_widths(layer, queries=queries, keys=keys, values=values)
    if valid_lens is not None:  # checked here once, not by each head
        valid_lens = _valid_lens(valid_lens, shapes)
    return (layer, queries, keys, values, valid_lens), {"training": training}


# Section 7: positional encoding


@CHECKS.init("PositionalEncoding")
def _positional_encoding_init(num_hiddens, dropout, max_len=1000):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_int("max_len", max_len, minimum=1)
    check_dropout(dropout)


@CHECKS.call("PositionalEncoding")
def _positional_encoding_call(layer, X, offset=0, training=None):
    _, max_len, num_hiddens = layer.P.shape  # the table: (1, max_len, num_hiddens)
    steps = check_positions(X, num_hiddens, offset, max_len)
    check_float(X=X)
    if steps is None:  # unknown until run time (tf.function): check it in the graph
        tf.debugging.assert_less_equal(
            offset + tf.shape(X)[1],
            max_len,
            message=marked(
                f"X must have at most max_len - offset = {max_len} - offset steps; "
                "got more inside a TensorFlow graph: raise max_len"
            ),
        )
