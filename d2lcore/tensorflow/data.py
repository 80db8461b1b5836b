"""Minibatches of TensorFlow tensors, and the English–French translation data
(section 4)."""

import numpy as np
import tensorflow as tf

from d2lcore.checks import check_int
from d2lcore.convert import to_numpy
from d2lcore.datasets import read_data_nmt
from d2lcore.text import Vocab, build_array_nmt, preprocess_nmt, tokenize_nmt


class _Minibatches:
    """Re-iterable: each ``for`` loop over it is one epoch, in a new order if shuffled."""

    def __init__(self, arrays, batch_size, is_train):
        self.arrays, self.batch_size, self.is_train = arrays, batch_size, is_train
        self.num_examples = len(arrays[0])

    def __len__(self):
        return -(-self.num_examples // self.batch_size)  # the last batch may be smaller

    def __iter__(self):
        # NumPy's global generator, as in every framework: the same batches after set_seed
        if self.is_train:
            order = np.random.permutation(self.num_examples)
        else:
            order = np.arange(self.num_examples)
        for start in range(0, self.num_examples, self.batch_size):
            idx = order[start : start + self.batch_size]
            yield tuple(tf.constant(a[idx]) for a in self.arrays)


def load_array(data_arrays, batch_size, is_train=True):
    """An iterable over minibatches: tuples of tensors, one per array of ``data_arrays``.

    ``data_arrays``: arrays (NumPy or tensors) with the same first dimension n. Every
    epoch (every ``for`` loop over the result) visits each of the n examples once, in
    batches of ``batch_size`` (the last one smaller if n is not a multiple), shuffled with
    NumPy's global generator when ``is_train``. The tensors keep the arrays' dtypes: the
    translation data are int32."""
    check_int("batch_size", batch_size, minimum=1)
    if not isinstance(data_arrays, list | tuple) or not data_arrays:
        raise TypeError("data_arrays must be a non-empty list or tuple of arrays")
    arrays = []
    for i, a in enumerate(data_arrays):
        a = np.asarray(to_numpy(a))
        if a.ndim == 0:
            raise ValueError(f"data_arrays[{i}] is a scalar; give arrays of examples")
        arrays.append(a)
    sizes = [len(a) for a in arrays]
    if len(set(sizes)) != 1:
        raise ValueError(f"data_arrays must have equal first dimensions; got {sizes}")
    return _Minibatches(arrays, batch_size, is_train)


def load_data_nmt(batch_size, num_steps, num_examples=600):
    """(data_iter, src_vocab, tgt_vocab) for the first ``num_examples`` pairs of the
    project's English–French training corpus.

    Each batch: X (batch, num_steps), X_valid_len (batch,), Y (batch, num_steps),
    Y_valid_len (batch,), all int32; rows end with ``<eos>`` and are padded with
    ``<pad>``. Vocabularies: tokens seen at least twice, reserved ``<pad>``, ``<bos>``,
    ``<eos>``."""
    check_int("num_steps", num_steps, minimum=1)
    source, target = tokenize_nmt(preprocess_nmt(read_data_nmt()), num_examples)
    reserved = ["<pad>", "<bos>", "<eos>"]
    src_vocab = Vocab(source, min_freq=2, reserved_tokens=reserved)
    tgt_vocab = Vocab(target, min_freq=2, reserved_tokens=reserved)
    src_array, src_valid_len = build_array_nmt(source, src_vocab, num_steps)
    tgt_array, tgt_valid_len = build_array_nmt(target, tgt_vocab, num_steps)
    arrays = (src_array, src_valid_len, tgt_array, tgt_valid_len)
    return load_array(arrays, batch_size), src_vocab, tgt_vocab
