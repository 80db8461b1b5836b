"""beam_search (Decoding: Greedy and Beam Search), in every framework: a beam of one is greedy decoding, a batch
decodes as its sentences do alone, a wide enough beam finds the hypothesis that an exhaustive search scores best
(length normalisation included) while a narrow one can miss it, and the same weights give the same beams and
scores in the three frameworks."""

import importlib
import itertools

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.text import Vocab
from tests.conftest import make_tensor

TINY = Vocab(
    ["a"], reserved_tokens=["<pad>", "<bos>", "<eos>"]
)  # 5 symbols: <unk> <pad> <bos> <eos> a
STEPS = 4
ALPHA = 0.6
SIZES = dict(num_hiddens=8, ffn_num_hiddens=16, num_heads=2, num_layers=2, dropout=0.0)


def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def transformer(framework, src_size, tgt_size, weights=None, num_steps=STEPS):
    """A small Transformer EncoderDecoder in ``framework``, built by one call, with ``weights`` (canonical NumPy
    arrays, export_weights's) if given."""
    d2l = module(framework)
    s = SIZES
    args = (s["num_hiddens"], s["ffn_num_hiddens"], s["num_heads"], s["num_layers"], s["dropout"])
    net = d2l.EncoderDecoder(
        d2l.TransformerEncoder(src_size, *args), d2l.TransformerDecoder(tgt_size, *args)
    )
    if framework == "mxnet":
        net.initialize()
    ids = np.ones((1, num_steps), dtype=np.int32)
    lens = np.array([num_steps], dtype=np.int32)
    if framework == "pytorch":
        net.eval()
        net(
            make_tensor(framework, ids.astype(np.int64)),
            make_tensor(framework, ids.astype(np.int64)),
            make_tensor(framework, lens),
        )
    elif framework == "tensorflow":
        net(
            make_tensor(framework, ids),
            make_tensor(framework, ids),
            make_tensor(framework, lens),
            training=False,
        )
    else:
        net(make_tensor(framework, ids), make_tensor(framework, ids), make_tensor(framework, lens))
    if weights is not None:
        d2l.load_weights(net, weights)
    return net


_NETS = {}


def loaded(framework, src_size, tgt_size, weights, num_steps=STEPS):
    """One model per framework and size, reused with new weights: TensorFlow traces its graphs once."""
    key = (framework, src_size, tgt_size, num_steps)
    if key not in _NETS:
        _NETS[key] = transformer(framework, src_size, tgt_size, num_steps=num_steps)
    module(framework).load_weights(_NETS[key], weights)
    return _NETS[key]


def random_weights(src_size, tgt_size, seed, scale=1.0):
    """Canonical weights of a PyTorch model drawn with ``seed``; the output layer's times ``scale`` (sharper
    next-token distributions)."""
    import torch

    torch.manual_seed(seed)
    weights = module("pytorch").export_weights(transformer("pytorch", src_size, tgt_size))
    return {n: w * scale if n.startswith("decoder.dense") else w for n, w in weights.items()}


def search(framework, net, sentences, vocab, beam_size, num_steps=STEPS, src_vocab=None, **kw):
    d2l = module(framework)
    src_vocab = vocab if src_vocab is None else src_vocab
    return d2l.beam_search(net, sentences, src_vocab, vocab, num_steps, d2l.cpu(), beam_size, **kw)


# --- exhaustive search on the tiny vocabulary -----------------------------------------------------------------------


def hypotheses(vocab, steps):
    """Every output of at most ``steps`` tokens: those ended by <eos>, and those cut at ``steps`` tokens."""
    eos = vocab["<eos>"]
    others = [i for i in range(len(vocab)) if i != eos]
    for n in range(steps):
        for body in itertools.product(others, repeat=n):
            yield (*body, eos)
    yield from itertools.product(others, repeat=steps)


def exhaustive(net, sentence, vocab, steps, alpha):
    """{hypothesis (token ids, <eos> included if any): log P / ((5 + |y|) / 6) ** alpha}, each log-probability
    computed by one teacher-forced call of the PyTorch decoder on the whole hypothesis (no cache)."""
    import torch

    from d2lcore.text import encode_source

    src, valid = encode_source(sentence, vocab, steps)
    scores = {}
    with torch.no_grad():
        enc_X, lens = torch.tensor([src]), torch.tensor([valid])
        for y in hypotheses(vocab, steps):
            dec_X = torch.tensor([[vocab["<bos>"], *y[:-1]]])
            state = net.decoder.init_state(net.encoder(enc_X, lens), lens)
            log_probs = torch.log_softmax(net.decoder(dec_X, state)[0][0], dim=-1).numpy()
            log_p = float(sum(log_probs[i, t] for i, t in enumerate(y)))
            scores[y] = log_p / ((5 + len(y)) / 6) ** alpha
    return scores


def as_text(vocab, y):
    eos = vocab["<eos>"]
    y = list(y)
    return " ".join(vocab.to_tokens(y[: y.index(eos)] if eos in y else y))


SEEDS = range(8)


@pytest.fixture(scope="module")
def exhaustive_cases():
    """Per seed: (weights, the exhaustive search's best hypothesis as text, its score)."""
    cases = {}
    for seed in SEEDS:
        weights = random_weights(len(TINY), len(TINY), seed, scale=4.0)
        net = loaded("pytorch", len(TINY), len(TINY), weights)
        scores = exhaustive(net, "a a", TINY, STEPS, ALPHA)
        best = max(scores, key=scores.get)
        cases[seed] = (weights, as_text(TINY, best), scores[best], len(scores))
    return cases


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_wide_beam_finds_the_exhaustive_best(framework, exhaustive_cases):
    """With a beam as wide as the number of hypotheses (341: 5 symbols, 4 steps), nothing is pruned: the search
    returns the hypothesis that the exhaustive search scores best, with its score, for every seed."""
    for seed, (weights, best, score, count) in exhaustive_cases.items():
        assert count == 1 + 4 + 16 + 64 + 256
        net = loaded(framework, len(TINY), len(TINY), weights)
        got, got_score = search(framework, net, ["a a"], TINY, count, alpha=ALPHA)[0]
        assert got == best, (seed, got, best)
        assert got_score == pytest.approx(score, abs=1e-4)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_narrow_beam_can_miss_it(framework, exhaustive_cases):
    """A beam of one (greedy) or two misses the exhaustive best for some seeds: it returns a hypothesis that
    scores lower."""
    missed = {1: 0, 2: 0}
    for weights, best, score, _ in exhaustive_cases.values():
        net = loaded(framework, len(TINY), len(TINY), weights)
        for k in missed:
            got, got_score = search(framework, net, ["a a"], TINY, k, alpha=ALPHA)[0]
            assert got_score <= score + 1e-5  # never better than the best of all
            missed[k] += got != best
    print(
        f"\n{framework}: the exhaustive best missed by a beam of 1 for {missed[1]}, of 2 for {missed[2]} "
        f"of {len(exhaustive_cases)} seeds"
    )
    assert missed[1] >= 1, missed


# --- greedy, batches, frameworks on the book's vocabularies ---------------------------------------------------------

SENTENCES = ["go .", "i lost .", "he's calm .", "i'm home .", "we won ."]


@pytest.fixture(scope="module")
def vocabs():
    _, src_vocab, tgt_vocab = module("pytorch").load_data_nmt(64, 10)
    return src_vocab, tgt_vocab


@pytest.fixture(scope="module")
def book_weights(vocabs):
    src_vocab, tgt_vocab = vocabs
    return random_weights(len(src_vocab), len(tgt_vocab), 3, scale=3.0)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_beam_of_one_is_greedy_decoding(framework, vocabs, book_weights):
    src_vocab, tgt_vocab = vocabs
    d2l = module(framework)
    net = loaded(framework, len(src_vocab), len(tgt_vocab), book_weights, num_steps=10)
    beams = search(framework, net, SENTENCES, tgt_vocab, 1, num_steps=10, src_vocab=src_vocab)
    greedy = [
        d2l.predict_seq2seq(net, s, src_vocab, tgt_vocab, 10, d2l.cpu())[0] for s in SENTENCES
    ]
    assert [t for t, _ in beams] == greedy
    assert len(set(greedy)) > 1  # the sentences are told apart


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_batch_decodes_as_its_sentences_alone(framework, vocabs, book_weights):
    """Sentences of different lengths in one batch: the same hypotheses and scores as each alone."""
    src_vocab, tgt_vocab = vocabs
    net = loaded(framework, len(src_vocab), len(tgt_vocab), book_weights, num_steps=10)
    together = search(
        framework, net, SENTENCES, tgt_vocab, 4, num_steps=10, src_vocab=src_vocab, all_beams=True
    )
    for sentence, beams in zip(SENTENCES, together):
        alone = search(
            framework,
            net,
            [sentence],
            tgt_vocab,
            4,
            num_steps=10,
            src_vocab=src_vocab,
            all_beams=True,
        )
        assert [t for t, _ in beams] == [t for t, _ in alone[0]]
        np.testing.assert_allclose(
            [s for _, s in beams], [s for _, s in alone[0]], rtol=0, atol=1e-5
        )
        assert len(beams) == 4 and all(a[1] >= b[1] for a, b in zip(beams, beams[1:]))


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_the_same_beams_in_every_framework(vocabs, book_weights, alpha):
    """The same weights: the same hypotheses, in the same order, and the same scores within float32 rounding."""
    src_vocab, tgt_vocab = vocabs
    results = {}
    for framework in FRAMEWORKS:
        net = loaded(framework, len(src_vocab), len(tgt_vocab), book_weights, num_steps=10)
        results[framework] = search(
            framework,
            net,
            SENTENCES,
            tgt_vocab,
            3,
            num_steps=10,
            src_vocab=src_vocab,
            alpha=alpha,
            all_beams=True,
        )
    expected = results["pytorch"]
    for framework in ("mxnet", "tensorflow"):
        for got, want in zip(results[framework], expected):
            assert [t for t, _ in got] == [t for t, _ in want], framework
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-4)


def test_length_normalisation_is_the_gnmt_penalty(vocabs, book_weights):
    """alpha = 0 gives the plain log-probability; for another alpha each score is that one divided by
    ((5 + |y|) / 6) ** alpha, with |y| the tokens after <bos>, <eos> included when the hypothesis ended."""
    src_vocab, tgt_vocab = vocabs
    net = loaded("pytorch", len(src_vocab), len(tgt_vocab), book_weights, num_steps=10)
    plain = search(
        "pytorch",
        net,
        SENTENCES[:2],
        tgt_vocab,
        3,
        num_steps=10,
        src_vocab=src_vocab,
        alpha=0.0,
        all_beams=True,
    )
    scaled = search(
        "pytorch",
        net,
        SENTENCES[:2],
        tgt_vocab,
        3,
        num_steps=10,
        src_vocab=src_vocab,
        alpha=1.0,
        all_beams=True,
    )
    for a, b in zip(plain, scaled):
        for text, log_p in a:
            # the same hypotheses are kept (the search ranks by log P); only their final scores change
            match = [s for t, s in b if t == text]
            assert match, text
            words = len(text.split())
            n = words if words == 10 else words + 1  # cut at num_steps = 10, or ended by its <eos>
            assert match[0] == pytest.approx(log_p / ((5 + n) / 6), abs=1e-5)
