"""The English–French text pipeline: cleaning, tokens, vocabularies and index arrays, on hand-made texts with
hand-computed results, and on a real Tatoeba sample."""

from pathlib import Path

import numpy as np
import pytest

from d2lcore.datasets import read_data_nmt
from d2lcore.text import Vocab, build_array_nmt, preprocess_nmt, tokenize_nmt, truncate_pad

# A real Tatoeba sample, kept outside the repository (third-party data: never copy it in).
TATOEBA = Path(__file__).resolve().parents[2] / "shared/data/tatoeba-fra-eng/fra.txt"


# --- preprocess_nmt ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("Go.\tVa !", "go .\tva !"),
        ("Run!\tCours\u202f!", "run !\tcours !"),  # narrow no-break space
        ("Wow!\tÇa\u00a0alors\u00a0!", "wow !\tça alors !"),  # no-break space
        ("Hi,you?", "hi ,you ?"),
        ("Wait...", "wait . . ."),  # each dot follows a non-space
        (".Go", ".go"),  # nothing is inserted before the first character
        ("A .", "a ."),  # already spaced: unchanged
        ("A.\r\nB!\r\n", "a .\nb !\n"),  # Windows line endings
        ("", ""),
    ],
)
def test_preprocess_nmt(raw, clean):
    assert preprocess_nmt(raw) == clean


def test_preprocess_nmt_rejects_bytes():
    with pytest.raises(TypeError, match="text must be a str"):
        preprocess_nmt(b"Go.\tVa !")


# --- tokenize_nmt --------------------------------------------------------------------------------------------

TEXT = "\n".join(
    [
        "go .\tva !",
        "no tab on this line",  # skipped, not counted
        "hi .\tsalut !",
        "",  # skipped
        "one\ttwo\tthree",  # three fields: skipped
        "run  !\tcours !",  # a double space makes no empty token
        "who ?\tqui ?",
        "",
    ]
)


def test_tokenize_nmt_all_pairs():
    source, target = tokenize_nmt(TEXT)
    assert source == [["go", "."], ["hi", "."], ["run", "!"], ["who", "?"]]
    assert target == [["va", "!"], ["salut", "!"], ["cours", "!"], ["qui", "?"]]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_tokenize_nmt_reads_exactly_num_examples(n):
    source, target = tokenize_nmt(TEXT, num_examples=n)
    assert len(source) == len(target) == n
    assert source == [["go", "."], ["hi", "."], ["run", "!"], ["who", "?"]][:n]


def test_tokenize_nmt_windows_line_endings():
    assert tokenize_nmt("a .\tb .\r\nc\td\r\n") == ([["a", "."], ["c"]], [["b", "."], ["d"]])


def test_tokenize_nmt_too_few_pairs():
    with pytest.raises(
        ValueError, match=r"num_examples=5, but the text has only 4 sentence pair"
    ) as e:
        tokenize_nmt(TEXT, num_examples=5)
    assert "1 line(s) have more than two tab-separated fields" in str(e.value)


@pytest.mark.parametrize(
    "num_examples, error, message",
    [
        (0, ValueError, ">= 1"),
        (-3, ValueError, ">= 1"),
        (2.0, TypeError, "int"),
        (True, TypeError, "int"),
    ],
)
def test_tokenize_nmt_checks_num_examples(num_examples, error, message):
    with pytest.raises(error, match=message):
        tokenize_nmt(TEXT, num_examples=num_examples)


# --- Vocab ---------------------------------------------------------------------------------------------------

SENTENCES = [["b", "a", "c"], ["a", "b", "d"], ["a"]]  # a: 3, b: 2, c: 1, d: 1; first seen: b a c d


def test_vocab_order_and_lookup():
    vocab = Vocab(SENTENCES, reserved_tokens=["<pad>", "<eos>"])
    assert len(vocab) == 7
    assert vocab.to_tokens(list(range(7))) == ["<unk>", "<pad>", "<eos>", "a", "b", "c", "d"]
    assert vocab["a"] == 3 and vocab["d"] == 6 and vocab["<eos>"] == 2
    assert vocab["zebra"] == 0 == vocab.unk
    assert vocab[["b", "zebra", "a"]] == [4, 0, 3]
    assert vocab[("c",)] == [5]
    assert vocab.to_tokens(4) == "b"
    assert vocab.to_tokens(np.array([3, 5])) == ["a", "c"]
    assert vocab.token_freqs == [("a", 3), ("b", 2), ("c", 1), ("d", 1)]


def test_vocab_min_freq():
    vocab = Vocab(SENTENCES, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    assert vocab.to_tokens(list(range(len(vocab)))) == [
        "<unk>",
        "<pad>",
        "<bos>",
        "<eos>",
        "a",
        "b",
    ]
    assert vocab["c"] == vocab["d"] == 0
    assert vocab.token_freqs[-1] == ("d", 1)  # the counts keep rare tokens


def test_vocab_ties_keep_first_occurrence():
    # x and y occur twice each; y is seen first although x reaches two first
    vocab = Vocab(["y", "x", "x", "y", "z"])
    assert vocab.to_tokens([1, 2, 3]) == ["y", "x", "z"]


def test_vocab_flat_list_empty_and_reserved_in_corpus():
    assert len(Vocab()) == 1 and Vocab().to_tokens(0) == "<unk>"
    vocab = Vocab(["<pad>", "a", "<pad>"], reserved_tokens=["<pad>"])
    assert vocab.to_tokens([0, 1, 2]) == ["<unk>", "<pad>", "a"] and len(vocab) == 3


def test_vocab_errors():
    with pytest.raises(ValueError, match="duplicates"):
        Vocab(SENTENCES, reserved_tokens=["<pad>", "<eos>", "<pad>"])
    with pytest.raises(ValueError, match="<unk>"):
        Vocab(SENTENCES, reserved_tokens=["<unk>"])
    with pytest.raises(
        TypeError, match="^Vocab: tokens must be a list of tokens or a list of token lists; got str"
    ):
        Vocab("hello")
    with pytest.raises(TypeError, match="tokens must be str"):
        Vocab([["a", 3]])
    with pytest.raises(ValueError, match="min_freq"):
        Vocab(SENTENCES, min_freq=-1)
    vocab = Vocab(SENTENCES)
    with pytest.raises(IndexError, match=r"index 5 is out of range for a vocabulary of 5 tokens"):
        vocab.to_tokens(5)
    with pytest.raises(IndexError, match="out of range"):
        vocab.to_tokens([1, -1])
    with pytest.raises(TypeError, match="look up a token"):
        vocab[3]


# --- truncate_pad and build_array_nmt ------------------------------------------------------------------------


def test_truncate_pad():
    assert truncate_pad([47, 4], 10, 1) == [47, 4, 1, 1, 1, 1, 1, 1, 1, 1]
    assert truncate_pad([1, 2, 3], 2, 0) == [1, 2]
    assert truncate_pad((1, 2), 2, 0) == [1, 2]
    assert truncate_pad(["a"], 3, "<pad>") == ["a", "<pad>", "<pad>"]
    with pytest.raises(ValueError, match="num_steps must be >= 1"):
        truncate_pad([1], 0, 0)
    with pytest.raises(TypeError, match="num_steps must be an int"):
        truncate_pad([1], 2.0, 0)


def test_build_array_nmt():
    # <unk> 0, <pad> 1, <bos> 2, <eos> 3, then '.' (twice), 'go', 'hi'
    vocab = Vocab([["go", "."], ["hi", "."]], reserved_tokens=["<pad>", "<bos>", "<eos>"])
    lines = [["go", "."], ["hi", "there", ".", "now"], []]
    array, valid_len = build_array_nmt(lines, vocab, 4)
    expected = [[5, 4, 3, 1], [6, 0, 4, 0], [3, 1, 1, 1]]  # row 2 loses its <eos> to truncation
    np.testing.assert_array_equal(array, expected)
    np.testing.assert_array_equal(valid_len, [3, 4, 1])
    assert array.dtype == np.int32 and valid_len.dtype == np.int32
    empty, empty_len = build_array_nmt([], vocab, 4)
    assert empty.shape == (0, 4) and empty_len.shape == (0,)


def test_build_array_nmt_errors():
    with pytest.raises(
        ValueError,
        match=r"^build_array_nmt: vocab must hold the reserved tokens \['<eos>', '<pad>'\]; got one "
        r"without \['<eos>'\]",
    ):
        build_array_nmt([["a"]], Vocab(["a"], reserved_tokens=["<pad>"]), 3)
    vocab = Vocab(["a"], reserved_tokens=["<pad>", "<eos>"])
    with pytest.raises(TypeError, match=r"lines\[1\] must be a list of tokens; got str"):
        build_array_nmt([["a"], "a b"], vocab, 3)
    with pytest.raises(ValueError, match="num_steps"):
        build_array_nmt([["a"]], vocab, 0)


# --- the real Tatoeba format ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tatoeba():
    if not TATOEBA.is_file():
        pytest.skip(f"the Tatoeba sample {TATOEBA} is absent (it lives outside the repository)")
    return read_data_nmt(path=TATOEBA)


def test_tatoeba_raw_format(tatoeba):
    lines = tatoeba.split("\n")
    assert lines[0] == "Go.\tVa !"
    assert lines[1] == "Run!\tCours\u202f!" and lines[2] == "Run!\tCourez\u202f!"


def test_tatoeba_pipeline(tatoeba):
    text = preprocess_nmt(tatoeba)
    assert "\u202f" not in text and "\u00a0" not in text
    assert "\u202f" in tatoeba  # the raw file needs the replacement
    source, target = tokenize_nmt(text, num_examples=3)
    assert source == [["go", "."], ["run", "!"], ["run", "!"]]
    assert target == [["va", "!"], ["cours", "!"], ["courez", "!"]]
    source, target = tokenize_nmt(text, num_examples=600)
    assert len(source) == len(target) == 600
    source, target = tokenize_nmt(text)
    assert len(source) == 18066  # every line of the sample is a pair
    assert all(source) and all(target)  # no empty sentences
    vocab = Vocab(source, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    array, valid_len = build_array_nmt(source[:2], vocab, 4)
    np.testing.assert_array_equal(
        array, [[vocab["go"], vocab["."], 3, 1], [vocab["run"], vocab["!"], 3, 1]]
    )
    np.testing.assert_array_equal(valid_len, [3, 3])
