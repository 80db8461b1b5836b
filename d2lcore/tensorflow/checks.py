"""Checks of TensorFlow tensors' dtypes and contents: the framework facts behind the
messages of :mod:`d2lcore.checks`."""

import contextlib
import re

import numpy
import tensorflow as tf

from d2lcore import checks
from d2lcore.boundary import Checks
from d2lcore.checks import check_lengths, dtype_error, token_ids_error

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
