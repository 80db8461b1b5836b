"""BLEU against values computed by hand from its definition; corpus BLEU and chrF against values computed by
hand and against sacreBLEU called directly."""

import math

import pytest
import sacrebleu

from d2lcore.metrics import bleu, corpus_scores


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


# --- corpus BLEU and chrF (sacreBLEU) ---------------------------------------------------------------------------


def test_corpus_scores_of_perfect_and_of_disjoint_translations():
    assert corpus_scores(["il est riche .", "va !"], [["il est riche ."], ["va !"]]) == {
        "bleu": pytest.approx(100.0),
        "chrf": pytest.approx(100.0),
    }
    assert corpus_scores(["xyz"], [["abc"]]) == {"bleu": 0.0, "chrf": 0.0}


def test_corpus_bleu_sums_lengths_over_the_corpus():
    # every n-gram of both predictions matches, so BLEU is the brevity penalty alone: one for the
    # whole corpus, exp(1 - 10 / 9) from the summed lengths 9 and 10 (not the mean of the sentences')
    predictions = ["a b c d", "a b c d e"]
    scores = corpus_scores(predictions, [["a b c d e"], ["a b c d e"]])
    assert scores["bleu"] == pytest.approx(100 * math.exp(1 - 10 / 9), rel=1e-12)
    assert corpus_scores(predictions[:1], [["a b c d e"]])["bleu"] == pytest.approx(
        100 * math.exp(1 - 5 / 4), rel=1e-12
    )


def test_corpus_bleu_splits_at_spaces_only():
    # the book's text is tokenized: "l'ai" is one token, and a prediction may end in " ."
    assert corpus_scores(["je l'ai perdu ."], [["je l'ai perdu ."]])["bleu"] == pytest.approx(100.0)
    assert corpus_scores(["je l' ai perdu ."], [["je l'ai perdu ."]])["bleu"] < 100


def test_corpus_bleu_needs_four_grams():
    # a corpus without a single 4-gram has a 4-gram precision of 0/0: BLEU 0, even for an exact
    # translation, while chrF (character n-grams) still gives 100
    assert corpus_scores(["j'ai perdu ."], [["j'ai perdu ."]]) == {
        "bleu": 0.0,
        "chrf": pytest.approx(100.0),
    }


def test_corpus_scores_are_sacrebleus():
    predictions = ["il est malade .", "va !", "je suis chez moi .", "elle est en retard ."]
    references = [
        ["il est calme ."],
        ["va !", "allez !"],
        ["je suis à la maison ."],
        ["elle est en retard !"],
    ]
    streams = [  # sacreBLEU's layout: the j-th reference of every sentence, None where it has none
        ["il est calme .", "va !", "je suis à la maison .", "elle est en retard !"],
        [None, "allez !", None, None],
    ]
    scores = corpus_scores(predictions, references)
    expected_bleu = sacrebleu.corpus_bleu(predictions, streams, tokenize="none", force=True).score
    assert scores["bleu"] == pytest.approx(expected_bleu, rel=1e-12)
    assert scores["chrf"] == pytest.approx(
        sacrebleu.corpus_chrf(predictions, streams).score, rel=1e-12
    )
    assert 0 < scores["bleu"] < 100 and 0 < scores["chrf"] < 100
    # a second reference can only help: here it is the prediction itself
    one = corpus_scores(["il est très calme ."], [["il est calme ."]])
    two = corpus_scores(["il est très calme ."], [["il est calme .", "il est très calme ."]])
    assert one["bleu"] < two["bleu"] == pytest.approx(100.0)
    assert one["chrf"] < two["chrf"] == pytest.approx(100.0)


def test_corpus_scores_errors():
    with pytest.raises(TypeError, match="predictions must be a list"):
        corpus_scores("va !", [["va !"]])
    with pytest.raises(ValueError, match="predictions must be a non-empty list"):
        corpus_scores([], [])
    with pytest.raises(
        ValueError, match=r"references must hold one list of references per prediction \(1\); got 2"
    ):
        corpus_scores(["va !"], [["va !"], ["va !"]])
    with pytest.raises(TypeError, match=r"references\[0\] must be a list of reference strings"):
        corpus_scores(["va !"], ["va !"])
    with pytest.raises(
        ValueError, match=r"references\[0\] must be a non-empty list of reference strings"
    ):
        corpus_scores(["va !"], [[]])
    with pytest.raises(TypeError, match=r"predictions\[1\] must be a str"):
        corpus_scores(["va !", None], [["va !"], ["va !"]])
    with pytest.raises(TypeError, match=r"references\[0\]\[1\] must be a str"):
        corpus_scores(["va !"], [["va !", 3]])
