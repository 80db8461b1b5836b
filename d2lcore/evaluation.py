"""Translating a whole corpus and scoring it (framework-neutral): the training and held-out evaluation that the
translation pages run after training, with the measures of :mod:`d2lcore.metrics`."""

from typing import NamedTuple

from d2lcore.contracts.engine import checked
from d2lcore.datasets import read_data_nmt
from d2lcore.metrics import bleu, corpus_scores
from d2lcore.records import show_record
from d2lcore.text import preprocess_nmt, tokenize_nmt

TRAINING_PAIRS = 600
"""The number of pairs of ``fra.txt`` that the translation pages train on (``load_data_nmt``'s default)."""


class Translation(NamedTuple):
    """One translated sentence: ``source`` (English), ``output`` (the model's French), ``bleu`` (the book's
    per-sentence BLEU with k = 2 against the best of its references), ``reference`` (that best reference) and
    ``references`` (every French translation the corpus gives for ``source``)."""

    source: str
    output: str
    bleu: float
    reference: str
    references: tuple


@checked
def translate_corpus(translate, text, num_examples=None):
    """Translate every distinct English sentence of ``text`` (a corpus as ``read_data_nmt`` returns it; its first
    ``num_examples`` pairs if given) with ``translate`` (a callable: English sentence -> French sentence, both
    space-separated tokens) and score it against the best of its references: a list of :class:`Translation`,
    in the corpus's order. A sentence with several translations in the corpus (``stop !``: ``arrête !`` or
    ``arrêtez !``) is translated once."""
    references = {}
    for src, tgt in zip(*tokenize_nmt(preprocess_nmt(text), num_examples)):
        references.setdefault(" ".join(src), []).append(" ".join(tgt))
    results = []
    for source, refs in references.items():
        output = translate(source)
        if not isinstance(output, str):
            raise TypeError(
                f"translate must return the translation as a str; got {type(output).__name__} "
                f"{output!r:.60} for {source!r} (predict_seq2seq returns a pair: take its [0])"
            )
        score, best = max((bleu(output, ref, k=2), ref) for ref in refs)
        results.append(Translation(source, output, score, best, tuple(refs)))
    return results


def _show_scores(name, label, results, tgt_vocab):
    """Show the record ``name``, its line starting with ``label``, of a list of :class:`Translation`: mean
    per-sentence BLEU, share exact, corpus BLEU and chrF, and how many best references hold a word outside
    ``tgt_vocab``."""
    scores = [r.bleu for r in results]
    mean, exact = sum(scores) / len(scores), sum(s == 1 for s in scores) / len(scores)
    rare = sum(tgt_vocab.unk in tgt_vocab[r.reference.split()] for r in results)
    corpus = corpus_scores(
        [r.output for r in results], [list(r.references) for r in results]
    )
    return show_record(
        name,
        f"{label:>8}: {len(results)} sentences, mean BLEU {mean:.3f}, exact {exact:.0%}, "
        f"corpus BLEU {corpus['bleu']:.1f}, chrF {corpus['chrf']:.1f}; "
        f"{rare} references have a word outside the vocabulary",
        sentences=len(results),
        bleu=mean,
        exact=exact,
        unknown=rare,
        corpus_bleu=corpus["bleu"],
        chrf=corpus["chrf"],
    )


def _best_first(results):
    return sorted(results, key=lambda r: (-r.bleu, r.source))


@checked
def evaluate_translations(translate, tgt_vocab, name="bleu"):
    """Translate the English sentences of the first 600 training pairs and of the held-out file with
    ``translate`` (English sentence -> French sentence) and show two records, ``<name>_training`` and
    ``<name>_held_out``, with the fields ``sentences``, ``bleu`` (the mean per-sentence BLEU), ``exact`` (the
    share scoring 1), ``unknown`` (best references with a word that ``tgt_vocab`` maps to ``<unk>``),
    ``corpus_bleu`` and ``chrf`` (sacreBLEU's, 0 ... 100). Returns the two lists of :class:`Translation`
    (training, held-out), each best first (BLEU descending, then the source in alphabetical order)."""
    seen = translate_corpus(translate, read_data_nmt(), num_examples=TRAINING_PAIRS)
    unseen = translate_corpus(translate, read_data_nmt("heldout"))
    _show_scores(f"{name}_training", "training", seen, tgt_vocab)
    _show_scores(f"{name}_held_out", "held-out", unseen, tgt_vocab)
    return _best_first(seen), _best_first(unseen)


@checked
def show_translations(translate, sources, references, name="test_sentences"):
    """Translate each English sentence of ``sources`` with ``translate`` (English sentence -> French sentence,
    both str), print it with its per-sentence BLEU (k = 2) against the French sentence of ``references`` at the
    same position, and show the record ``name``: ``exact`` (how many score 1) and ``sentences``. Returns the
    list of translations, in the order of ``sources``."""
    outputs, exact = [], 0
    for source, reference in zip(sources, references):
        output = translate(source)
        score = bleu(output, reference, k=2)
        exact += score == 1
        print(f"{source} => {output}, BLEU {score:.3f}")
        outputs.append(output)
    show_record(
        name, f"{exact} of {len(sources)} exact", exact=exact, sentences=len(sources)
    )
    return outputs


@checked
def evaluate_held_out(translate, tgt_vocab, name):
    """Translate the held-out sentences with ``translate`` (English sentence -> French sentence) and show the
    record ``name`` with the fields of :func:`evaluate_translations`'s records (``sentences``, ``bleu``,
    ``exact``, ``unknown``, ``corpus_bleu``, ``chrf``). Returns the list of :class:`Translation`, best first."""
    unseen = translate_corpus(translate, read_data_nmt("heldout"))
    _show_scores(name, "held-out", unseen, tgt_vocab)
    return _best_first(unseen)
