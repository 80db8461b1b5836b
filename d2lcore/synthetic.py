"""Synthetic sequence tasks whose correct alignment is known in advance (framework-neutral).

Reversal: the target is the source read backwards, so target step i must read source position L - 1 - i of a
source of L symbols. A model whose attention has learned the task shows that permutation, an anti-diagonal.

Neighbours: every position of a string must name the symbols at the positions just before and just after it, so a
model with two attention heads does best with one head on each neighbour (the multi-head attention page).
"""

import string

import numpy

from d2lcore.contracts.engine import checked
from d2lcore.convert import to_numpy
from d2lcore.records import show_record
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


@checked
def evaluate_reversal(translate, num_examples=100, seed=1):
    """Reverse the ``num_examples`` strings of ``reversal_pairs(num_examples, seed=seed)`` with ``translate``
    (source string -> (output string, attention): one array (num_steps,) of source weights per output step, as
    ``predict_seq2seq`` returns with ``save_attention_weights=True``) and show the record "reversal": ``exact``
    (strings reversed exactly), ``strings``, ``steps`` (the output steps that write a symbol, L per string of L
    symbols), ``share`` (the share of those steps whose largest weight falls on source position L - 1 - i, the
    one that step i copies) and ``weight`` (the mean weight those steps put on that position). Returns the
    Record."""
    sources, targets = reversal_pairs(num_examples, seed=seed)
    on_target = steps = exact = 0
    weight = 0.0
    for source, target in zip(sources, targets):
        output, attention = translate(" ".join(source))
        exact += output == " ".join(target)
        for i, weights in enumerate(attention[: len(source)]):
            weights = to_numpy(weights)
            on_target += int(numpy.argmax(weights)) == len(source) - 1 - i
            weight += float(weights[len(source) - 1 - i])
            steps += 1
    share = on_target / steps if steps else 0.0
    weight = weight / steps if steps else 0.0
    return show_record(
        "reversal",
        f"{exact} of {num_examples} strings reversed exactly; the largest weight on the expected "
        f"position at {on_target} of {steps} output steps ({share:.1%})",
        exact=exact,
        strings=num_examples,
        share=share,
        weight=weight,
        steps=steps,
    )


@checked
def neighbour_arrays(num_examples, num_steps=8, num_symbols=8, seed=0):
    """``num_examples`` random strings of ``num_steps`` symbols (indices 0 ... ``num_symbols`` - 1, drawn with
    ``numpy.random.default_rng(seed)``) as ``(X, Y)``, NumPy.

    ``X`` (num_examples, num_steps, num_symbols + num_steps) float32: at each position the one-hot code of its
    symbol followed by the one-hot code of the position. ``Y`` (num_examples, num_steps, 2) int32: at position i
    the symbols at positions i - 1 and i + 1, the string read as a circle (position 0's left neighbour is the
    last position, the last position's right neighbour is position 0)."""
    rng = numpy.random.default_rng(seed)
    symbols = rng.integers(0, num_symbols, size=(num_examples, num_steps))
    positions = numpy.broadcast_to(
        numpy.eye(num_steps), (num_examples, num_steps, num_steps)
    )
    X = numpy.concatenate([numpy.eye(num_symbols)[symbols], positions], axis=2)
    # numpy.roll(s, 1)[i] == s[i - 1], numpy.roll(s, -1)[i] == s[i + 1], around the circle
    Y = numpy.stack(
        [numpy.roll(symbols, 1, axis=1), numpy.roll(symbols, -1, axis=1)], axis=2
    )
    return X.astype(numpy.float32), Y.astype(numpy.int32)


def _neighbour_shares(weights):
    """weights (batch, num_heads, n, n), NumPy -> (num_heads, 2): for each head, the share of the queries whose
    largest weight falls on the position just before them (column 0) and just after them (column 1), around
    the circle."""
    n = weights.shape[2]
    largest = weights.argmax(axis=3)  # (batch, heads, n): the key with the largest weight
    query = numpy.arange(n)
    on_left = (largest == (query - 1) % n).mean(axis=(0, 2))
    on_right = (largest == (query + 1) % n).mean(axis=(0, 2))
    return numpy.stack([on_left, on_right], axis=1)


@checked
def show_neighbour_heads(weights):
    """Show the record "heads" of self-attention weights (batch, num_heads, n, n), any framework, on the
    neighbour task (:func:`neighbour_arrays`): for every head, the share of its queries whose largest weight
    falls on the left neighbour (i - 1) and on the right one (i + 1), around the circle. Fields: ``left`` and
    ``right``, the largest share of any head for each neighbour; ``left_head`` and ``right_head``, those
    heads' numbers (from 1); ``queries``, the queries per head (batch * n). Returns the Record."""
    weights = to_numpy(weights)
    shares = _neighbour_shares(weights)
    batch, _, n, _ = weights.shape
    left_head, right_head = (int(h) + 1 for h in shares.argmax(axis=0))
    text = "; ".join(
        f"head {h}: largest weight on i - 1 for {left:.1%} of the queries, on i + 1 for {right:.1%}"
        for h, (left, right) in enumerate(shares, start=1)
    )
    return show_record(
        "heads",
        f"{text} ({batch * n} queries per head)",
        left=float(shares[:, 0].max()),
        right=float(shares[:, 1].max()),
        left_head=left_head,
        right_head=right_head,
        queries=batch * n,
    )
