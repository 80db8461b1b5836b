"""BLEU against values computed by hand from its definition."""

import math

import pytest

from d2lcore.metrics import bleu


def test_perfect_match():
    assert bleu("il est riche .", "il est riche .", k=2) == pytest.approx(1.0)
    assert bleu("il est riche .", "il est riche .", k=4) == pytest.approx(1.0)


def test_one_wrong_word():
    # p1 = 3/4 (il, est, .), p2 = 1/3 (il est); no brevity penalty
    expected = (3 / 4) ** (1 / 2) * (1 / 3) ** (1 / 4)
    assert bleu("il est riche .", "il est calme .", k=2) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.658, abs=1e-3)


def test_prediction_shorter_than_k():
    # one token, k=2: only unigrams exist; p1 = 1, brevity penalty exp(1 - 2/1)
    assert bleu("il", "il est", k=2) == pytest.approx(math.exp(-1), rel=1e-12)
    # two tokens, k=4: p1 = p2 = 1; brevity penalty exp(1 - 4/2)
    assert bleu("il est", "il est riche .", k=4) == pytest.approx(math.exp(-1), rel=1e-12)
    assert bleu("riche", "il est", k=3) == 0.0


def test_brevity_penalty():
    # a correct but short prediction: p1 = p2 = 1, penalty exp(1 - 4/3)
    assert bleu("il est riche", "il est riche .", k=2) == pytest.approx(
        math.exp(1 - 4 / 3), rel=1e-12
    )
    # a longer prediction: penalty 1; p1 = 4/5, p2 = 2/4 (il est, riche .)
    expected = (4 / 5) ** 0.5 * (2 / 4) ** 0.25
    assert bleu("il est très riche .", "il est riche .", k=2) == pytest.approx(expected, rel=1e-12)


def test_clipped_counts():
    # 'the' occurs once in the label, so only one of the four predicted 'the' matches: p1 = 1/4
    assert bleu("the the the the", "the cat", k=1) == pytest.approx(0.5, rel=1e-12)


def test_empty_and_spaces():
    assert bleu("", "il est riche .", k=2) == 0.0
    assert bleu("   ", "il est riche .", k=2) == 0.0
    assert bleu("a", "", k=1) == 0.0
    assert bleu("il  est", "il est", k=2) == pytest.approx(1.0)


def test_errors():
    with pytest.raises(ValueError, match="k must be >= 1"):
        bleu("a", "a", k=0)
    with pytest.raises(TypeError, match="k must be an int"):
        bleu("a", "a", k=2.0)
    with pytest.raises(TypeError, match="pred_seq must be a str"):
        bleu(["a"], "a", k=1)
    with pytest.raises(TypeError, match="label_seq must be a str"):
        bleu("a", None, k=1)
