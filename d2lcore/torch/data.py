"""Minibatches of PyTorch tensors, and the English–French translation data
(Sequence-to-Sequence Toolkit)."""

import numpy as np
import torch

from d2lcore.batches import Minibatches, as_arrays
from d2lcore.text import nmt_arrays


def load_array(data_arrays, batch_size, is_train=True):
    """An iterable over minibatches: tuples of tensors, one per array of ``data_arrays``.

    ``data_arrays``: arrays (NumPy or tensors) with the same first dimension n. Every
    epoch (every ``for`` loop over the result) visits each of the n examples once, in
    batches of ``batch_size`` (the last one smaller if n is not a multiple), shuffled with
    NumPy's global generator when ``is_train``. Integer arrays become int64 tensors
    (PyTorch's index type), others keep their dtype."""
    arrays = [
        a.astype(np.int64) if np.issubdtype(a.dtype, np.integer) else a
        for a in as_arrays(data_arrays)
    ]
    return Minibatches(arrays, batch_size, is_train, torch.from_numpy)


def load_data_nmt(batch_size, num_steps, num_examples=600):
    """(data_iter, src_vocab, tgt_vocab) for the first ``num_examples`` pairs of the
    project's English–French training corpus.

    Each batch: X (batch, num_steps), X_valid_len (batch,), Y (batch, num_steps),
    Y_valid_len (batch,), all int64; rows end with ``<eos>`` and are padded with
    ``<pad>``. Vocabularies: tokens seen at least twice, reserved ``<pad>``, ``<bos>``,
    ``<eos>``."""
    arrays, src_vocab, tgt_vocab = nmt_arrays(num_steps, num_examples)
    return load_array(arrays, batch_size), src_vocab, tgt_vocab


__all__ = ["load_array", "load_data_nmt"]  # the names d2lcore.torch re-exports
