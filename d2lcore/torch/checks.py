"""Checks of PyTorch tensors' dtypes and contents: the framework facts behind the messages
of :mod:`d2lcore.checks`."""

import torch

from d2lcore import checks
from d2lcore.checks import dtype_error, token_ids_error


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


def _lengths(lens):
    """lens (a tensor) as NumPy, for the neutral checks."""
    return lens.cpu().numpy()


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
