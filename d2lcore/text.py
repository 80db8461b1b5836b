"""Text to arrays of token indices: cleaning, word tokens, vocabularies, fixed-length rows.

Framework-neutral (Python and NumPy only); used for the English–French translation data.
"""

import collections

import numpy

from d2lcore.contracts.engine import checked
from d2lcore.datasets import read_data_nmt


@checked
def preprocess_nmt(text):
    """Clean a corpus of ``English<TAB>French`` lines for word tokenization.

    Windows line endings become ``\\n``; no-break spaces (U+202F, U+00A0) become plain spaces;
    everything is lowercased; and a space is put before each ``, . ! ?`` that does not already
    follow a space (except at the very start), so that punctuation becomes a token of its own:
    ``"Go.\\tVa !"`` -> ``"go .\\tva !"``.
    """
    text = text.replace("\r\n", "\n")
    # U+202F (narrow no-break space) and U+00A0 (no-break space) -> plain spaces
    text = text.replace("\u202f", " ").replace("\u00a0", " ")
    text = text.lower()
    out = []
    for i, char in enumerate(text):
        if i > 0 and char in ",.!?" and text[i - 1] != " ":
            out.append(" ")
        out.append(char)
    return "".join(out)


@checked
def tokenize_nmt(text, num_examples=None):
    """Word tokens of the first ``num_examples`` sentence pairs of ``text`` (all if None).

    A pair is a line with exactly two tab-separated fields; other lines (blank, or with more
    fields) are skipped and not counted. Tokens are separated by spaces. Returns
    ``(source, target)``: two lists of the same length, one token list per sentence.
    Raises ValueError if ``text`` has fewer than ``num_examples`` pairs.
    """
    source, target = [], []
    wide_lines = 0  # lines with more than two fields, e.g. an attribution column
    for line in text.split("\n"):
        if num_examples is not None and len(source) == num_examples:
            break
        fields = line.removesuffix("\r").split("\t")
        if len(fields) != 2:
            wide_lines += len(fields) > 2
            continue
        source.append([token for token in fields[0].split(" ") if token])
        target.append([token for token in fields[1].split(" ") if token])
    if num_examples is not None and len(source) < num_examples:
        hint = ""
        if wide_lines:
            hint = (
                f"; {wide_lines} line(s) have more than two tab-separated fields"
                " (keep only the English and French columns)"
            )
        raise ValueError(
            "num_examples must be at most the number of sentence pairs (lines "
            f"'English<TAB>French'); got num_examples={num_examples}, but the text has only "
            f"{len(source)} sentence pair(s){hint}"
        )
    return source, target


def _flatten(tokens):
    """A list of tokens, or a list of token lists, as one flat list of tokens."""
    return [
        token
        for item in tokens
        for token in (item if isinstance(item, list | tuple) else [item])
    ]


@checked
class Vocab:
    """A vocabulary: token <-> index.

    Index 0 is the unknown token ``<unk>``; then come ``reserved_tokens`` in the order given
    (e.g. ``["<pad>", "<bos>", "<eos>"]``), then the tokens of ``tokens`` that occur at least
    ``min_freq`` times, most frequent first; tokens equally frequent keep the order in which
    they first occur. ``tokens`` is a list of tokens or a list of token lists (sentences).

    ``vocab[token]`` is the token's index (0 if unknown); ``vocab[list_of_tokens]`` a list of
    indices. ``vocab.to_tokens(index_or_list)`` goes back. ``token_freqs`` lists every token
    counted in ``tokens`` with its count, most frequent first (also those below ``min_freq``).
    """

    def __init__(self, tokens=None, min_freq=0, reserved_tokens=None):
        reserved = [] if reserved_tokens is None else list(reserved_tokens)
        counter = collections.Counter(_flatten([] if tokens is None else tokens))
        # sorted() is stable and a Counter keeps first-occurrence order: ties stay in that order
        self._token_freqs = sorted(counter.items(), key=lambda item: -item[1])
        self._idx_to_token = ["<unk>", *reserved]
        self._token_to_idx = {token: i for i, token in enumerate(self._idx_to_token)}
        for token, freq in self._token_freqs:
            if freq < min_freq:
                break
            if token not in self._token_to_idx:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    def __contains__(self, token):
        return token in self._token_to_idx

    def __getitem__(self, tokens):
        """A token's index, or a list of indices for a list or tuple of tokens."""
        if isinstance(tokens, list | tuple):
            return [self[token] for token in tokens]
        if not isinstance(tokens, str):
            raise TypeError(
                f"look up a token (str) or a list of tokens; got {type(tokens).__name__}"
            )
        return self._token_to_idx.get(tokens, self.unk)

    def to_tokens(self, indices):
        """An index's token, or a list of tokens for a list of indices."""
        if hasattr(indices, "tolist"):  # NumPy arrays and framework tensors
            indices = indices.tolist()
        if isinstance(indices, list | tuple):
            return [self.to_tokens(index) for index in indices]
        if isinstance(indices, bool) or not isinstance(indices, int):
            raise TypeError(
                f"indices must be an int or a list of ints; got {type(indices).__name__}"
            )
        if not 0 <= indices < len(self):
            raise IndexError(
                f"index {indices} is out of range for a vocabulary of {len(self)} tokens "
                f"(valid: 0 to {len(self) - 1})"
            )
        return self._idx_to_token[indices]

    @property
    def unk(self):
        """The index of the unknown token ``<unk>``: 0."""
        return 0

    @property
    def token_freqs(self):
        """``[(token, count), ...]`` for every counted token, most frequent first."""
        return list(self._token_freqs)

    def __repr__(self):
        head = ", ".join(repr(t) for t in self._idx_to_token[:6])
        more = ", ..." if len(self) > 6 else ""
        return f"Vocab({len(self)} tokens: {head}{more})"


@checked
def truncate_pad(line, num_steps, padding_token):
    """The first ``num_steps`` items of ``line``, right-padded with ``padding_token`` if shorter.

    ``line``: a list (of tokens or indices); returns a new list of length ``num_steps``.
    """
    line = list(line)
    if len(line) > num_steps:
        return line[:num_steps]
    return line + [padding_token] * (num_steps - len(line))


@checked
def build_array_nmt(lines, vocab, num_steps):
    """Token lists -> one row of indices each, ``<eos>`` appended, then truncated or padded.

    ``lines``: n token lists; ``vocab``: a :class:`Vocab` holding ``<eos>`` and ``<pad>``.
    Returns ``(array, valid_len)``: ``array`` of shape (n, num_steps) and ``valid_len`` of
    shape (n,), the number of entries of each row that are not ``<pad>``; both NumPy int32.
    A line of num_steps tokens or more loses its ``<eos>`` to truncation.
    """
    pad, eos = vocab["<pad>"], vocab["<eos>"]
    rows = [truncate_pad([*vocab[list(line)], eos], num_steps, pad) for line in lines]
    array = numpy.array(rows, dtype=numpy.int32).reshape(len(rows), num_steps)
    valid_len = (array != pad).sum(axis=1).astype(numpy.int32)
    return array, valid_len


@checked
def nmt_arrays(num_steps, num_examples=600):
    """The first ``num_examples`` pairs of the project's English–French training corpus as
    ((X (n, num_steps), X_valid_len (n,), Y (n, num_steps), Y_valid_len (n,)), src_vocab,
    tgt_vocab): NumPy int32 arrays whose rows end with ``<eos>`` and are padded with
    ``<pad>``; vocabularies of the tokens seen at least twice, with ``<pad>``, ``<bos>``,
    ``<eos>`` reserved."""
    source, target = tokenize_nmt(preprocess_nmt(read_data_nmt()), num_examples)
    reserved = ["<pad>", "<bos>", "<eos>"]
    src_vocab = Vocab(source, min_freq=2, reserved_tokens=reserved)
    tgt_vocab = Vocab(target, min_freq=2, reserved_tokens=reserved)
    src_array, src_valid_len = build_array_nmt(source, src_vocab, num_steps)
    tgt_array, tgt_valid_len = build_array_nmt(target, tgt_vocab, num_steps)
    return (src_array, src_valid_len, tgt_array, tgt_valid_len), src_vocab, tgt_vocab


@checked
def encode_source(src_sentence, src_vocab, num_steps):
    """A sentence to translate -> (``num_steps`` token indices: its tokens, ``<eos>``, then
    ``<pad>``; its valid length, counted after truncation to ``num_steps``)."""
    tokens = preprocess_nmt(src_sentence).split()
    indices = [*src_vocab[tokens], src_vocab["<eos>"]]
    return truncate_pad(indices, num_steps, src_vocab["<pad>"]), min(
        len(indices), num_steps
    )
