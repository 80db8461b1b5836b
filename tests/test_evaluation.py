"""The corpus evaluation of the translation pages (d2lcore.evaluation), with translators whose scores are known:
one that looks up a reference, one that echoes the English."""

import collections

import pytest

import d2lcore.common as d2l
from d2lcore.records import collect

CORPUS = "Go.\tVa !\nGo.\tMarche.\nHi.\tSalut !\nRun!\tCours !\n"


def test_translate_corpus_scores_each_sentence_once_against_its_best_reference():
    outputs = {"go .": "marche .", "hi .": "bonjour !", "run !": "cours !"}
    results = d2l.translate_corpus(outputs.__getitem__, CORPUS)
    assert [r.source for r in results] == ["go .", "hi .", "run !"]  # "go ." once, in corpus order
    go, hi, run = results
    assert go.references == ("va !", "marche .") and go.reference == "marche ." and go.bleu == 1.0
    assert hi.bleu == pytest.approx(d2l.bleu("bonjour !", "salut !", k=2))
    assert run == d2l.Translation("run !", "cours !", 1.0, "cours !", ("cours !",))
    assert len(d2l.translate_corpus(outputs.__getitem__, CORPUS, num_examples=2)) == 1


def test_translate_corpus_refuses_a_translator_that_returns_a_pair():
    with pytest.raises(TypeError, match="translate must return the translation as a str"):
        d2l.translate_corpus(lambda s: (s, None), CORPUS)


def test_a_translator_that_looks_up_the_corpus_scores_perfectly():
    sources, targets = d2l.tokenize_nmt(d2l.preprocess_nmt(d2l.read_data_nmt()), 600)
    heldout = d2l.tokenize_nmt(d2l.preprocess_nmt(d2l.read_data_nmt("heldout")))
    lookup = {}
    for src, tgt in zip(sources + heldout[0], targets + heldout[1]):
        lookup.setdefault(" ".join(src), " ".join(tgt))
    vocab = d2l.Vocab(targets, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    with collect() as records:
        seen, unseen = d2l.evaluate_translations(lookup.__getitem__, vocab, name="lookup")
    shown = {r.name: r for r in records}
    assert list(shown) == ["lookup_training", "lookup_held_out"]
    training, held_out = shown["lookup_training"], shown["lookup_held_out"]
    assert training["sentences"] == len(seen) == len({" ".join(s) for s in sources})
    assert held_out["sentences"] == len(unseen) == 120
    for record in (training, held_out):
        assert record["bleu"] == record["exact"] == 1.0
        assert record["corpus_bleu"] == pytest.approx(100.0) and record["chrf"] == pytest.approx(
            100.0
        )
    counts = collections.Counter(token for tgt in targets for token in tgt)
    rare = sum(any(counts[t] < 2 for t in r.reference.split()) for r in seen)
    assert training["unknown"] == rare > 0  # words seen once in training map to <unk>
    assert held_out["unknown"] == 0  # the held-out file uses words seen at least twice
    assert "training: " in training.text and "held-out: " in held_out.text


def test_evaluate_translations_lists_best_first():
    with collect():
        seen, unseen = d2l.evaluate_translations(lambda s: s, d2l.Vocab(["va"]))
    for results in (seen, unseen):
        keys = [(-r.bleu, r.source) for r in results]
        assert keys == sorted(keys)


def test_show_translations_prints_each_score_and_counts_the_exact_ones(capsys):
    outputs = {"go .": "va !", "hi .": "bonjour !", "run !": "cours !"}
    with collect() as records:
        shown = d2l.show_translations(
            outputs.__getitem__, list(outputs), ["va !", "salut !", "cours !"], name="few"
        )
    assert shown == ["va !", "bonjour !", "cours !"]
    (record,) = records
    assert record.name == "few" and dict(record) == {"exact": 2, "sentences": 3}
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "go . => va !, BLEU 1.000",
        f"hi . => bonjour !, BLEU {d2l.bleu('bonjour !', 'salut !', k=2):.3f}",
        "run ! => cours !, BLEU 1.000",
    ]


def test_evaluate_held_out_shows_one_record_under_its_name():
    with collect() as records:
        unseen = d2l.evaluate_held_out(lambda s: s, d2l.Vocab(["va"]), "echo")
    (record,) = records
    assert record.name == "echo" and record["sentences"] == len(unseen) == 120
    assert record["exact"] == 0.0 and record.text.startswith("held-out: ")
    keys = [(-r.bleu, r.source) for r in unseen]
    assert keys == sorted(keys)
