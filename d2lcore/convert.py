"""Conversion of any framework's tensors to NumPy, without importing a framework."""

import numpy as np


def to_numpy(x):
    """Return ``x`` (an MXNet, PyTorch or TensorFlow tensor, a NumPy array, a number or a nested list) as a NumPy
    array on the host. Gradients are not tracked through the result."""
    if isinstance(x, np.ndarray):
        return x
    if x is None:
        raise TypeError("to_numpy needs a tensor, an array, a number or a list; got None")
    if hasattr(x, "asnumpy"):  # MXNet
        return x.asnumpy()
    if hasattr(x, "detach"):  # PyTorch
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy"):  # TensorFlow (eager tensors and variables)
        return x.numpy()
    array = np.asarray(x) if not isinstance(x, str | bytes) else None
    if array is None or array.dtype.kind not in "biufc":
        raise TypeError(
            f"to_numpy needs a tensor, an array, a number or a (nested) list of numbers; got {type(x).__name__} "
            f"{x!r:.40}"
        )
    return array


def last_query(weights):
    """The attention weights of the last query of the first example, as NumPy: ``weights`` (batch, ...,
    queries, keys) -> (..., keys). A tuple or list of such tensors gives a tuple of arrays (e.g. the
    Transformer decoder's self-attention and encoder–decoder attention)."""
    if isinstance(weights, (tuple, list)):
        return tuple(last_query(w) for w in weights)
    weights = to_numpy(weights)
    if weights.ndim < 3:
        raise ValueError(
            "weights must have shape (batch, ..., queries, keys); got shape "
            f"{weights.shape}"
        )
    return weights[0, ..., -1, :]
