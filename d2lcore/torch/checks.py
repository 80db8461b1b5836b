"""Checks of PyTorch tensors' dtypes and contents: the framework facts behind the messages
of :mod:`d2lcore.checks`."""

import weakref

import torch

from d2lcore import checks
from d2lcore.boundary import Checks
from d2lcore.checks import check_lengths, dtype_error, token_ids_error

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
