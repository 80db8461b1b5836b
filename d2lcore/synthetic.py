"""Synthetic sequence tasks whose correct alignment is known in advance (framework-neutral).

Reversal: the target is the source read backwards, so target step i must read source position L - 1 - i of a
source of L symbols. A model whose attention has learned the task shows that permutation, an anti-diagonal.
"""

import string

import numpy

from d2lcore.checks import checked
from d2lcore.text import Vocab, build_array_nmt


@checked
def reversal_pairs(num_examples, num_symbols=8, min_len=5, max_len=8, seed=0):
    """``num_examples`` random symbol sequences and their reversals, drawn with
    ``numpy.random.default_rng(seed)`` (the same pairs for the same arguments).

    The symbols are the first ``num_symbols`` lowercase letters (at most 26); each length is
    drawn uniformly from ``min_len ... max_len``. Returns ``(source, target)``: two lists of
    ``num_examples`` token lists, ``target[n] == source[n][::-1]``, e.g. ``["c", "a", "d",
    "b", "e"]`` and ``["e", "b", "d", "a", "c"]``."""
    rng = numpy.random.default_rng(seed)
    symbols = list(string.ascii_lowercase[:num_symbols])
    lengths = rng.integers(min_len, max_len + 1, size=num_examples)
    source = [[symbols[i] for i in rng.integers(0, num_symbols, size=n)] for n in lengths]
    return source, [line[::-1] for line in source]


@checked
def reversal_arrays(num_examples, num_steps, num_symbols=8, min_len=5, max_len=8, seed=0):
    """The reversal task as arrays for ``load_array`` and ``train_seq2seq``: ``((X (n, num_steps),
    X_valid_len (n,), Y (n, num_steps), Y_valid_len (n,)), vocab)``, NumPy int32, the pairs of
    :func:`reversal_pairs` with the same arguments. Rows end with ``<eos>`` and are padded with
    ``<pad>`` (``num_steps`` must be at least ``max_len + 1``, so that no ``<eos>`` is cut).
    ``vocab`` serves source and target: ``<unk>``, ``<pad>``, ``<bos>``, ``<eos>``, then the
    symbols in alphabetical order."""
    source, target = reversal_pairs(num_examples, num_symbols, min_len, max_len, seed)
    symbols = list(string.ascii_lowercase[:num_symbols])
    vocab = Vocab(symbols, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    X, X_valid_len = build_array_nmt(source, vocab, num_steps)
    Y, Y_valid_len = build_array_nmt(target, vocab, num_steps)
    return (X, X_valid_len, Y, Y_valid_len), vocab
