"""Minibatches (load_array) and the English–French data (load_data_nmt), in every framework."""

import hashlib
import importlib

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.convert import to_numpy

INDEX_DTYPE = {"mxnet": np.int32, "pytorch": np.int64, "tensorflow": np.int32}


def epoch(data_iter):
    """One pass over data_iter as NumPy arrays, one list per array."""
    batches = [[to_numpy(t) for t in batch] for batch in data_iter]
    return batches


def test_load_array_visits_every_example_once_per_epoch(d2l, framework):
    a = np.arange(10, dtype=np.int32)
    b = np.arange(20, dtype=np.float32).reshape(10, 2)
    d2l.set_seed(0)
    data_iter = d2l.load_array((a, b), batch_size=3)
    assert len(data_iter) == 4
    orders = []
    for _ in range(2):  # re-iterable: each loop is one epoch
        batches = epoch(data_iter)
        assert [len(x) for x, _ in batches] == [3, 3, 3, 1]  # the last batch is kept
        xs = np.concatenate([x for x, _ in batches])
        ys = np.concatenate([y for _, y in batches])
        assert sorted(xs.tolist()) == list(range(10))
        np.testing.assert_array_equal(ys, b[xs])  # rows stay together
        assert xs.dtype == INDEX_DTYPE[framework] and ys.dtype == np.float32
        orders.append(xs.tolist())
    assert orders[0] != orders[1], "a new order every epoch"
    assert orders[0] != list(range(10)), "shuffled"


def test_load_array_keeps_the_order_for_evaluation(d2l):
    data_iter = d2l.load_array((np.arange(7),), batch_size=4, is_train=False)
    assert [x.tolist() for (x,) in epoch(data_iter)] == [[0, 1, 2, 3], [4, 5, 6]]


def test_load_array_gives_the_same_batches_in_every_framework():
    a = np.arange(50)
    orders = {}
    for framework in FRAMEWORKS:
        d2l = importlib.import_module(MODULE_OF[framework])
        d2l.set_seed(42)
        data_iter = d2l.load_array((a,), batch_size=8)
        orders[framework] = [[x.tolist() for (x,) in epoch(data_iter)] for _ in range(2)]
    assert orders["mxnet"] == orders["pytorch"] == orders["tensorflow"]


def test_load_array_rejects_bad_input(d2l):
    with pytest.raises(ValueError, match="equal first dimensions"):
        d2l.load_array((np.zeros(3), np.zeros(4)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        d2l.load_array((np.zeros(3),), batch_size=0)
    with pytest.raises(TypeError, match="list or tuple"):
        d2l.load_array(np.zeros(3), batch_size=2)


PAIRS = [
    ("Go.", "Va !"),
    ("Hi.", "Salut !"),
    ("I ran.", "J'ai couru."),
    ("I ran away.", "Je me suis enfui."),
    ("Go away!", "Va-t'en !"),
    ("I lost.", "J'ai perdu."),
    ("I went away, I ran.", "Je suis parti, j'ai couru."),
]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A small corpus in data_dir()/fra-eng, with its checksum, and D2L_DATA_DIR set to it."""
    folder = tmp_path / "fra-eng"
    folder.mkdir()
    text = "".join(f"{en}\t{fr}\n" for en, fr in PAIRS)
    (folder / "fra.txt").write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (folder / "SHA256SUMS").write_text(f"{digest}  fra.txt\n")
    monkeypatch.setenv("D2L_DATA_DIR", str(tmp_path))
    return PAIRS


def test_load_data_nmt_arrays_and_vocabularies(d2l, framework, corpus):
    d2l.set_seed(0)
    data_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(batch_size=4, num_steps=5, num_examples=6)
    for vocab in (src_vocab, tgt_vocab):
        assert vocab.to_tokens([0, 1, 2, 3]) == ["<unk>", "<pad>", "<bos>", "<eos>"]
    # tokens seen at least twice among the first 6 pairs, most frequent first; ties in the
    # order first seen
    assert src_vocab.to_tokens(list(range(4, len(src_vocab)))) == [".", "i", "go", "ran", "away"]
    assert tgt_vocab.to_tokens(list(range(4, len(tgt_vocab)))) == ["!", ".", "j'ai"]
    batches = epoch(data_iter)
    assert [len(b[0]) for b in batches] == [4, 2]  # exactly 6 examples
    X, X_valid_len, Y, Y_valid_len = (np.concatenate(parts) for parts in zip(*batches))
    assert X.shape == Y.shape == (6, 5) and X.dtype == INDEX_DTYPE[framework]
    rows = {tuple(x[: n - 1]): (y, m) for x, n, y, m in zip(X, X_valid_len, Y, Y_valid_len)}
    # "i ran away ." -> 4 tokens + <eos>: 5 steps; "je me suis enfui ." loses "." and <eos>
    y, m = rows[tuple(src_vocab[["i", "ran", "away", "."]])]
    assert m == 5 and y.tolist() == [0, 0, 0, 0, 5]  # unknown words, then "."
    y, m = rows[tuple(src_vocab[["i", "lost", "."]])]
    assert m == 4 and y.tolist() == [6, 0, 5, 3, 1]  # j'ai <unk> . <eos> <pad>
    for x, n in zip(X, X_valid_len):  # valid length = tokens + <eos>; the rest is padding
        assert x[n - 1] == 3 and (x[n:] == 1).all()


def test_load_data_nmt_takes_exactly_num_examples(d2l, corpus):
    data_iter, _, _ = d2l.load_data_nmt(batch_size=2, num_steps=4, num_examples=7)
    assert sum(len(b[0]) for b in epoch(data_iter)) == 7
    with pytest.raises(ValueError, match="only 7 sentence"):
        d2l.load_data_nmt(batch_size=2, num_steps=4, num_examples=8)


def test_load_data_nmt_on_the_project_corpus(d2l):
    data_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(batch_size=64, num_steps=10)
    sizes = [len(b[0]) for b in epoch(data_iter)]
    assert sum(sizes) == 600 and sizes == [64] * 9 + [24]
    for sentence in ("go .", "i lost .", "he's calm .", "i'm home ."):  # the book's examples
        assert 0 not in src_vocab[sentence.split()], sentence
    for sentence in ("va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."):
        assert 0 not in tgt_vocab[sentence.split()], sentence
