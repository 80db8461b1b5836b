"""Checks of MXNet arrays' dtypes and contents: the framework facts behind the messages of
:mod:`d2lcore.checks`."""

import numpy as onp
from mxnet import np

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
