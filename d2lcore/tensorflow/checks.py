"""Checks of TensorFlow tensors' dtypes and contents: the framework facts behind the
messages of :mod:`d2lcore.checks`."""

import tensorflow as tf

from d2lcore import checks
from d2lcore.checks import dtype_error, token_ids_error


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
    embeddings would wrap the others silently). Eagerly: one reduction and one wait per
    call; inside tf.function the values are not checked (train_seq2seq checks each batch
    before its compiled step)."""
    if not _dtype(name, X).is_integer:
        raise dtype_error(name, tf.as_dtype(X.dtype).name, "an integer")
    if tf.executing_eagerly() and bool(tf.reduce_any((X < 0) | (X >= vocab_size))):
        raise token_ids_error(name, tf.convert_to_tensor(X).numpy(), vocab_size)


def _lengths(lens):
    """lens as NumPy for the neutral checks; None inside tf.function, where the values are
    unknown (train_seq2seq checks each batch before its compiled step)."""
    return tf.convert_to_tensor(lens).numpy() if tf.executing_eagerly() else None


def check_decoder_init(enc_outputs, enc_valid_lens):
    """For Seq2SeqAttentionDecoder.init_state: enc_outputs is (outputs (batch, src_steps,
    num_hiddens), state (num_layers, batch, num_hiddens)), enc_valid_lens None or (batch,)
    lengths; returns (outputs, state). See :func:`d2lcore.checks.check_decoder_init`."""
    return checks.check_decoder_init(enc_outputs, enc_valid_lens, _lengths)


def check_decoder_call(X, state, vocab_size):
    """For Seq2SeqAttentionDecoder's call: X (batch, steps) token indices, state
    (enc_outputs, hidden, enc_valid_lens); returns state as a tuple. See
    :func:`d2lcore.checks.check_decoder_call`."""
    return checks.check_decoder_call(X, state, vocab_size, check_token_ids, _lengths)
