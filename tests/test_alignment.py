"""Attention seen working: Bahdanau's decoder, trained on the reversal task of the Bahdanau page, must put the
largest attention weight of (nearly) every output step on the one source position that the step copies.

The training run is the page's (same seed, data, model and settings), in each framework: a few seconds each.
"""

import numpy as np
import pytest

from d2lcore import synthetic
from d2lcore.records import collect

# The page's settings (chapters/attention/bahdanau-attention.md, "Seeing Attention Work")
SEED, NUM_EXAMPLES, NUM_STEPS, BATCH_SIZE, LR, NUM_EPOCHS = 2, 2000, 9, 128, 0.01, 24


def test_the_settings_are_the_pages():
    """The recipe trained here is the page's, whose claim benchmarks/trained_claims.py measures over seeds."""
    from pathlib import Path

    from booktools.split import read_source

    page = Path(__file__).resolve().parents[1] / "chapters" / "attention" / "bahdanau-attention.md"
    [code] = [
        c.source for c in read_source(page).cells if "reversal_arrays(num_examples=" in c.source
    ]
    for text in (
        f"d2l.set_seed({SEED})",
        f"rev_steps = {NUM_STEPS}",
        f"num_examples={NUM_EXAMPLES}",
        f"batch_size={BATCH_SIZE}",
        f"lr={LR}",
        f"num_epochs={NUM_EPOCHS}",
    ):
        assert text in code, (
            f"the page's reversal recipe has no {text!r}: update this file's settings"
        )


def test_reversal_pairs_are_reversals_drawn_from_the_seed():
    source, target = synthetic.reversal_pairs(50, num_symbols=4, min_len=2, max_len=6, seed=3)
    assert len(source) == len(target) == 50
    assert all(t == s[::-1] for s, t in zip(source, target))
    assert {len(s) for s in source} == {2, 3, 4, 5, 6}
    assert {token for s in source for token in s} == {"a", "b", "c", "d"}
    assert synthetic.reversal_pairs(50, 4, 2, 6, seed=3) == (source, target)
    assert synthetic.reversal_pairs(50, 4, 2, 6, seed=4) != (source, target)


def test_reversal_arrays_hold_the_pairs_in_the_toolkits_layout():
    (X, X_len, Y, Y_len), vocab = synthetic.reversal_arrays(20, 9, seed=5)
    source, target = synthetic.reversal_pairs(20, seed=5)
    assert vocab.to_tokens(list(range(len(vocab)))) == [
        "<unk>", "<pad>", "<bos>", "<eos>", *"abcdefgh"
    ]  # fmt: skip
    for array, lens, lines in ((X, X_len, source), (Y, Y_len, target)):
        assert array.shape == (20, 9) and array.dtype == lens.dtype == np.int32
        assert lens.tolist() == [len(line) + 1 for line in lines]
        for row, n, line in zip(array, lens, lines):
            assert vocab.to_tokens(row[:n].tolist()) == [*line, "<eos>"]
            assert set(row[n:].tolist()) <= {vocab["<pad>"]}


def fake_translator(offset):
    """A translator that reverses every string, with attention one-hot on source position L - 1 - i + offset."""

    def translate(sentence):
        source = sentence.split()
        n = len(source)
        attention = [np.eye(NUM_STEPS)[(n - 1 - i + offset) % NUM_STEPS] for i in range(n + 1)]
        return " ".join(source[::-1]), attention

    return translate


def test_evaluate_reversal_counts_the_steps_that_look_where_reversal_says():
    with collect() as records:
        right = synthetic.evaluate_reversal(fake_translator(0), num_examples=20)
        off = synthetic.evaluate_reversal(fake_translator(1), num_examples=20)
        wrong = synthetic.evaluate_reversal(lambda s: ("a", fake_translator(0)(s)[1]), 20)
    assert [r.name for r in records] == ["reversal"] * 3
    steps = sum(len(s) for s in synthetic.reversal_pairs(20, seed=1)[0])
    assert dict(right) == {"exact": 20, "strings": 20, "share": 1.0, "weight": 1.0, "steps": steps}
    assert off["share"] == off["weight"] == 0.0 and off["exact"] == 20
    assert wrong["exact"] == 0 and wrong["share"] == 1.0


def test_trained_attention_finds_the_reversal(d2l, capsys):
    d2l.set_seed(SEED)
    arrays, vocab = d2l.reversal_arrays(NUM_EXAMPLES, NUM_STEPS, seed=0)
    net = d2l.EncoderDecoder(
        d2l.Seq2SeqEncoder(len(vocab), embed_size=16, num_hiddens=32, num_layers=1),
        d2l.Seq2SeqAttentionDecoder(len(vocab), embed_size=16, num_hiddens=32, num_layers=1),
    )
    d2l.train_seq2seq(net, d2l.load_array(arrays, BATCH_SIZE), LR, NUM_EPOCHS, vocab, d2l.cpu())
    with collect():
        record = d2l.evaluate_reversal(
            lambda s: d2l.predict_seq2seq(
                net, s, vocab, vocab, NUM_STEPS, d2l.cpu(), save_attention_weights=True
            )
        )
    share, exact = record["share"], record["exact"] / record["strings"]
    with capsys.disabled():
        print(f" alignment {share:.3f}, exact {exact:.2f}", end=" ")
    assert exact >= 0.9, f"only {exact:.0%} of the new strings reversed exactly"
    assert share >= 0.9, (
        f"the largest weight falls on the expected source position at only {share:.1%} of the steps"
    )


@pytest.mark.parametrize("steps", [4, 8])
def test_reversal_arrays_refuse_rows_that_would_lose_their_eos(steps):
    with pytest.raises(ValueError, match="num_steps must be at least max_len \\+ 1"):
        synthetic.reversal_arrays(5, steps)
