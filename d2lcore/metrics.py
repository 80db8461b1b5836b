"""Evaluation of translations: the book's per-sentence BLEU (Papineni et al., 2002, in the form
of D2L, Dive into Deep Learning), and corpus BLEU and chrF (Popovic, 2015) as sacreBLEU (Post, 2018)
computes them."""

import collections
import math

from d2lcore.contracts.engine import checked


def _ngrams(tokens, n):
    return collections.Counter(
        tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)
    )


@checked
def bleu(pred_seq, label_seq, k):
    """Per-sentence BLEU (Papineni et al., 2002, scored on one sentence) of ``pred_seq``
    against ``label_seq``, space-separated strings: a float in [0, 1], exp(min(0, 1 -
    len_label / len_pred)) * prod over n = 1 ... min(k, len_pred) of p_n ** (1 / 2**n), with
    p_n the clipped n-gram precision. An empty prediction scores 0."""
    pred = [token for token in pred_seq.split(" ") if token]
    label = [token for token in label_seq.split(" ") if token]
    if not pred:
        return 0.0
    score = math.exp(min(0.0, 1 - len(label) / len(pred)))
    for n in range(1, min(k, len(pred)) + 1):
        pred_ngrams, label_ngrams = _ngrams(pred, n), _ngrams(label, n)
        matches = sum((pred_ngrams & label_ngrams).values())  # & keeps the smaller count
        score *= (matches / (len(pred) - n + 1)) ** (0.5**n)
    return score


@checked
def corpus_scores(predictions, references):
    """Corpus BLEU and chrF of ``predictions``, n space-separated strings, against
    ``references``, n lists of one or more reference strings each (sentence i may have
    several), computed by sacreBLEU: ``{"bleu": ..., "chrf": ...}``, floats on sacreBLEU's
    scale 0 ... 100.

    Corpus BLEU (Papineni et al., 2002) sums the matched n-grams (n = 1 ... 4) and the lengths
    of all sentences first, then takes the geometric mean of the four precisions with equal
    weights and one brevity penalty for the whole corpus (a corpus without a single 4-gram
    scores 0). The book's text is already
    tokenized and lowercased (``preprocess_nmt``), so BLEU splits at spaces only
    (``tokenize="none"``; ``force=True`` tells sacreBLEU that tokenized text is intended).
    chrF (Popovic, 2015) is the F-score (beta = 2: recall counts twice as much as precision)
    of character n-grams, n = 1 ... 6, spaces ignored, with sacreBLEU's defaults.

    Papineni, K., Roukos, S., Ward, T., & Zhu, W.-J. (2002). BLEU: a method for automatic
    evaluation of machine translation. Proceedings of ACL, 311-318.
    Popovic, M. (2015). chrF: character n-gram F-score for automatic MT evaluation.
    Proceedings of the Tenth Workshop on Statistical Machine Translation, 392-395.
    Post, M. (2018). A call for clarity in reporting BLEU scores. Proceedings of the Third
    Conference on Machine Translation, 186-191.
    """
    from sacrebleu.metrics import BLEU, CHRF  # imported here: only evaluation needs it

    # sacreBLEU wants reference streams: stream j holds the j-th reference of every sentence,
    # None where a sentence has fewer
    streams = [
        [refs[j] if j < len(refs) else None for refs in references]
        for j in range(max(len(refs) for refs in references))
    ]
    bleu_score = BLEU(tokenize="none", force=True).corpus_score(predictions, streams)
    chrf_score = CHRF().corpus_score(predictions, streams)
    return {"bleu": bleu_score.score, "chrf": chrf_score.score}
