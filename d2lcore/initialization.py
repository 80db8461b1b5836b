"""One initialisation rule for every framework, drawn with NumPy (framework-neutral).

The rule (Glorot & Bengio, 2010, "Understanding the difficulty of training deep
feedforward neural networks", AISTATS): every weight *matrix* W of shape (fan_out,
fan_in), in the canonical PyTorch layout of ``export_weights`` (dense layers, embeddings,
each GRU layer's input-to-hidden and hidden-to-hidden matrix taken whole), is drawn from
U(-a, a) with a = sqrt(6 / (fan_in + fan_out)); every bias is zero; anything else (e.g. a
layer norm's scale) keeps the value it has.

Because the numbers come from NumPy's global generator, in the sorted order of the
canonical names, every framework starts from the *same* weights after the same
``set_seed``."""

import numpy as np


def xavier_uniform_weights(weights):
    """``{canonical name: array}`` -> new arrays following the rule above (float32).

    ``weights``: the output of ``export_weights(net)``; only the names and shapes are
    used, except for the entries that the rule leaves as they are."""
    if not isinstance(weights, dict):
        raise TypeError(
            "weights must be a dict {canonical name: array}, as export_weights returns; "
            f"got {type(weights).__name__}"
        )
    new = {}
    for name in sorted(weights):
        array = np.asarray(weights[name])
        leaf = name.rsplit(".", 1)[-1]  # weight, bias, weight_ih_l0, bias_hh_l1, ...
        if leaf.startswith("bias"):
            new[name] = np.zeros(array.shape, dtype=np.float32)
        elif array.ndim == 2:
            fan_out, fan_in = array.shape
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            new[name] = np.random.uniform(-bound, bound, array.shape).astype(np.float32)
        else:
            new[name] = array.astype(np.float32)
    return new
