"""The decoder-only prefix language model (Decoder-Only Models, the Key–Value Cache and Rotary Embeddings), in
every framework: rotary_embedding against a NumPy reference of the same convention (pairs of adjacent features)
and not the other one (the two halves), a query–key score that depends only on the distance; CausalSelfAttention
against a NumPy version with its prefix mask (the prefix both ways, the rest causal, aligned to the last key); the
cache holds the projected, rotated keys and values; generation with the cache gives the same tokens and logits
as without, and a prompt followed by chunks of several tokens gives the logits of one call on the whole sequence;
the three frameworks agree given the same weights. Sizes are tiny: the file runs in seconds."""

import importlib
import math

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.convert import to_numpy
from tests.conftest import make_tensor
from tests.test_multihead import eval_call

RNG = np.random.default_rng(40)
VOCAB, HIDDENS, FFN, HEADS, LAYERS = 11, 16, 24, 4, 2
SEP = 1  # the separator token
INDEX = {"mxnet": np.int32, "pytorch": np.int64, "tensorflow": np.int32}


def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def numpy_rotary(X, offset=0, base=10000.0, halves=False):
    """Rotary embeddings in float64, written pair by pair: feature pair i of the row at position p, (2i, 2i + 1)
    (or, with ``halves``, (i, i + d / 2)), turned by the angle p * base ** (-2i / d)."""
    X = np.asarray(X, np.float64)
    steps, d = X.shape[-2:]
    out = np.empty_like(X)
    for row in range(steps):
        p = offset + row
        for i in range(d // 2):
            a, b = (i, i + d // 2) if halves else (2 * i, 2 * i + 1)
            angle = p * base ** (-2 * i / d)
            x, y = X[..., row, a], X[..., row, b]
            out[..., row, a] = x * math.cos(angle) - y * math.sin(angle)
            out[..., row, b] = x * math.sin(angle) + y * math.cos(angle)
    return out


def prefix_mask(n_q, n_k, prefix_len):
    """(n_q, n_k) booleans: query i sits at position n_k - n_q + i (the queries are the last positions) and sees
    key j if j is at most its position or j lies in the prefix."""
    mask = np.zeros((n_q, n_k), bool)
    for i in range(n_q):
        for j in range(n_k):
            mask[i, j] = j <= n_k - n_q + i or j < prefix_len
    return mask


# --- rotary embeddings ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0, 7])
def test_rotary_matches_numpy_adjacent_pairs(d2l, framework, offset):
    X = RNG.normal(size=(2, 3, 5, 8)).astype(np.float32)
    got = to_numpy(d2l.rotary_embedding(make_tensor(framework, X), offset))
    np.testing.assert_allclose(got, numpy_rotary(X, offset), rtol=1e-4, atol=1e-5)
    # The other convention rotates other pairs: a test of the wrong one would fail
    assert np.abs(got - numpy_rotary(X, offset, halves=True)).max() > 0.1
    # A rotation keeps each pair's length
    np.testing.assert_allclose(
        np.hypot(got[..., 0::2], got[..., 1::2]), np.hypot(X[..., 0::2], X[..., 1::2]), rtol=1e-5
    )


def test_rotary_score_depends_only_on_distance(d2l, framework):
    """q at position m and k at position n score (R_m q) . (R_n k) = q . R_(n - m) k: moving both by s changes
    nothing, while moving one does."""
    q, k = RNG.normal(size=(2, 16)).astype(np.float32)
    rows = np.stack([q] * 40)[None]  # (1, 40, 16): the same vector at positions 0 ... 39
    Rq = to_numpy(d2l.rotary_embedding(make_tensor(framework, rows)))[0]
    Rk = to_numpy(d2l.rotary_embedding(make_tensor(framework, np.stack([k] * 40)[None])))[0]
    scores = Rq @ Rk.T  # scores[m, n]: q at m, k at n
    for distance in (-5, 0, 3, 12):
        diagonal = np.diagonal(scores, offset=distance)  # every (m, m + distance)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=1e-4, atol=1e-4)
    assert abs(scores[0, 3] - scores[0, 4]) > 1e-3  # another distance, another score


# --- causal self-attention and its prefix mask ------------------------------------------------------------------


def attention_weights(seed=0):
    rng = np.random.default_rng(seed)
    return {
        f"{name}.weight": rng.normal(scale=HIDDENS**-0.5, size=(HIDDENS, HIDDENS)).astype(
            np.float32
        )
        for name in ("W_q", "W_k", "W_v", "W_o")
    }


def numpy_causal_attention(weights, X, prefix_lens):
    """CausalSelfAttention on the whole sequence X (batch, n, hiddens) in float64, head by head: rotary queries and
    keys, the prefix mask. Returns (output, attention weights (batch, heads, n, n))."""
    W = {name.split(".")[0]: w.astype(np.float64) for name, w in weights.items()}
    Q, K, V = (X.astype(np.float64) @ W[name].T for name in ("W_q", "W_k", "W_v"))
    batch, n, _ = X.shape
    d = HIDDENS // HEADS
    heads = np.zeros((batch, n, HIDDENS))
    attention = np.zeros((batch, HEADS, n, n))
    for b in range(batch):
        mask = prefix_mask(n, n, prefix_lens[b])
        for h in range(HEADS):
            f = slice(h * d, (h + 1) * d)
            scores = numpy_rotary(Q[b, :, f]) @ numpy_rotary(K[b, :, f]).T / math.sqrt(d)
            scores = np.where(mask, scores, -np.inf)
            a = np.exp(scores - scores.max(-1, keepdims=True))
            attention[b, h] = a / a.sum(-1, keepdims=True)
            heads[b, :, f] = attention[b, h] @ V[b, :, f]
    return heads @ W["W_o"].T, attention


def built_attention(d2l, framework, weights):
    layer = d2l.CausalSelfAttention(HIDDENS, HEADS, 0.0)
    eval_call(framework, layer, make_tensor(framework, np.zeros((1, 2, HIDDENS), np.float32)))
    d2l.load_weights(layer, weights)
    return layer


def test_causal_attention_matches_numpy_with_prefix_mask(d2l, framework):
    weights = attention_weights()
    X = RNG.normal(size=(2, 7, HIDDENS)).astype(np.float32)
    prefix_lens = np.array([3, 1], np.int32)
    layer = built_attention(d2l, framework, weights)
    out, (keys, values) = eval_call(
        framework, layer, make_tensor(framework, X), make_tensor(framework, prefix_lens)
    )
    expected, expected_attention = numpy_causal_attention(weights, X, prefix_lens)
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-4, atol=1e-5)
    attention = to_numpy(layer.attention_weights)
    np.testing.assert_allclose(attention, expected_attention, rtol=1e-4, atol=1e-6)
    for b in range(2):  # exactly zero where the mask hides a key, positive where it shows one
        mask = prefix_mask(7, 7, prefix_lens[b])
        assert (attention[b][:, ~mask] == 0).all() and (attention[b][:, mask] > 0).all()
    # The cache: the projected, rotated keys and the projected values, per head
    d = HIDDENS // HEADS
    K = X.astype(np.float64) @ weights["W_k.weight"].T
    V = X.astype(np.float64) @ weights["W_v.weight"].T
    assert to_numpy(keys).shape == to_numpy(values).shape == (2, HEADS, 7, d)
    for h in range(HEADS):
        f = slice(h * d, (h + 1) * d)
        np.testing.assert_allclose(
            to_numpy(keys)[:, h], numpy_rotary(K[:, :, f]), rtol=1e-4, atol=1e-5
        )
        np.testing.assert_allclose(to_numpy(values)[:, h], V[:, :, f], rtol=1e-4, atol=1e-5)


def test_prefix_mask_of_chunks_is_aligned_to_the_last_key(d2l, framework):
    """A chunk of 3 queries after a cache of 4 positions: query i sits at position 4 + i (the bottom-right
    corner), not at i (the top-left corner, as is_causal and use_causal_mask build it)."""
    weights = attention_weights(1)
    X = RNG.normal(size=(1, 7, HIDDENS)).astype(np.float32)
    layer = built_attention(d2l, framework, weights)
    prefix = make_tensor(framework, np.array([2], np.int32))
    _, cache = eval_call(framework, layer, make_tensor(framework, X[:, :4]), prefix)
    eval_call(framework, layer, make_tensor(framework, X[:, 4:]), prefix, cache)
    seen = to_numpy(layer.attention_weights)[0] > 0  # (heads, 3, 7)
    assert (seen == prefix_mask(3, 7, 2)).all()
    assert not (seen == np.tri(3, 7, dtype=bool)).all()  # the top-left mask differs here


# --- the model: the cache, the chunks, the frameworks --------------------------------------------------------------


_CANONICAL = {}


def canonical_weights():
    """The weights of one PyTorch PrefixLM, which every framework's model loads."""
    if not _CANONICAL:
        d2l = module("pytorch")
        d2l.set_seed(3)
        _CANONICAL.update(d2l.export_weights(built_lm("pytorch")))
    return _CANONICAL


def built_lm(framework, weights=None, rotary=True):
    d2l = module(framework)
    net = d2l.PrefixLM(VOCAB, HIDDENS, FFN, HEADS, LAYERS, 0.0, max_len=32, rotary=rotary)
    eval_call(framework, net, make_tensor(framework, np.ones((1, 2), INDEX[framework])))
    if weights is not None:
        d2l.load_weights(net, weights)
    return net


PROMPT = np.array([[4, 7, 2, SEP, 9], [3, SEP, 5, 6, 8]])  # prefixes of 4 and 2 tokens


@pytest.mark.parametrize("rotary", [True, False])
def test_generate_with_cache_equals_without(d2l, framework, rotary):
    net = built_lm(framework, canonical_weights(), rotary)
    prompt = make_tensor(framework, PROMPT.astype(INDEX[framework]))
    tokens, logits = d2l.generate(net, prompt, 8, SEP)
    tokens_off, logits_off = d2l.generate(net, prompt, 8, SEP, use_cache=False)
    assert to_numpy(tokens).shape == (2, 8) and to_numpy(logits).shape == (2, 8, VOCAB)
    np.testing.assert_array_equal(to_numpy(tokens), to_numpy(tokens_off))
    np.testing.assert_allclose(to_numpy(logits), to_numpy(logits_off), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rotary", [True, False])
def test_prompt_then_chunks_equals_one_call(d2l, framework, rotary):
    """A prompt of 5 tokens, then chunks of 3, 2 and 1 on the caches: the logits of one call on all 11 (with
    sinusoidal encodings too: the new tokens' positions start at the cache's length)."""
    net = built_lm(framework, canonical_weights(), rotary)
    sequence = RNG.integers(2, VOCAB, size=(2, 11)).astype(INDEX[framework])
    sequence[:, 3] = SEP
    prefix = make_tensor(framework, np.array([4, 4], np.int32))
    whole, _ = eval_call(framework, net, make_tensor(framework, sequence), prefix)
    pieces, caches = [], None
    for start, stop in ((0, 5), (5, 8), (8, 10), (10, 11)):
        chunk = make_tensor(framework, sequence[:, start:stop])
        logits, caches = eval_call(framework, net, chunk, prefix, caches)
        pieces.append(to_numpy(logits))
    assert to_numpy(caches[0][0]).shape == (2, HEADS, 11, HIDDENS // HEADS)
    np.testing.assert_allclose(
        np.concatenate(pieces, axis=1), to_numpy(whole), rtol=1e-4, atol=1e-5
    )


def test_prefix_attends_both_ways(d2l, framework):
    """Changing a later prefix token changes the logits of an earlier prefix position; changing a target token
    leaves every earlier position alone."""
    net = built_lm(framework, canonical_weights())
    prefix = make_tensor(framework, np.array([4], np.int32))
    base = np.array([[4, 7, 2, SEP, 9, 5, 6]], INDEX[framework])

    def logits(seq):
        return to_numpy(eval_call(framework, net, make_tensor(framework, seq), prefix)[0])[0]

    source_changed, target_changed = base.copy(), base.copy()
    source_changed[0, 2] = 8
    target_changed[0, 5] = 8
    assert np.abs(logits(source_changed)[0] - logits(base)[0]).max() > 1e-3
    np.testing.assert_allclose(logits(target_changed)[:5], logits(base)[:5], rtol=1e-5, atol=1e-6)


def test_frameworks_agree_with_shared_weights():
    prompt = PROMPT
    results = {}
    for framework in FRAMEWORKS:
        net = built_lm(framework, canonical_weights())
        tokens, logits = module(framework).generate(
            net, make_tensor(framework, prompt.astype(INDEX[framework])), 6, SEP
        )
        results[framework] = to_numpy(tokens), to_numpy(logits)
    tokens, logits = results["pytorch"]
    for framework in FRAMEWORKS:
        np.testing.assert_array_equal(results[framework][0], tokens, err_msg=framework)
        np.testing.assert_allclose(
            results[framework][1], logits, rtol=1e-4, atol=1e-5, err_msg=framework
        )


def test_sinusoidal_lm_adds_the_table_and_rotates_nothing(d2l, framework):
    """rotary=False: the logits of the blocks run on embedding * sqrt(num_hiddens) + the sinusoid table, with
    rotation off in every attention; and they differ from the rotary model's with the same weights."""
    from d2lcore.positional import sinusoid_table

    net = built_lm(framework, canonical_weights(), rotary=False)
    assert not any(blk.attention.rotary for blk in net.blks)
    tokens = np.array([[4, 7, 2, SEP, 9, 5, 6]], INDEX[framework])
    prefix = make_tensor(framework, np.array([4], np.int32))
    logits = to_numpy(eval_call(framework, net, make_tensor(framework, tokens), prefix)[0])
    H = to_numpy(net.embedding(make_tensor(framework, tokens))) * math.sqrt(HIDDENS)
    H = make_tensor(framework, (H + sinusoid_table(7, HIDDENS)).astype(np.float32))
    for blk in net.blks:
        H, _ = blk(H, prefix)  # in evaluation mode already, with its parent
    np.testing.assert_allclose(logits, to_numpy(net.dense(H)), rtol=1e-4, atol=1e-5)
    rotary = built_lm(framework, canonical_weights())
    other = to_numpy(eval_call(framework, rotary, make_tensor(framework, tokens), prefix)[0])
    assert np.abs(other - logits).max() > 1e-3


def test_frameworks_agree_without_rotary():
    results = {}
    for framework in FRAMEWORKS:
        net = built_lm(framework, canonical_weights(), rotary=False)
        prompt = make_tensor(framework, PROMPT.astype(INDEX[framework]))
        results[framework] = to_numpy(module(framework).generate(net, prompt, 6, SEP)[1])
    for framework in FRAMEWORKS:
        np.testing.assert_allclose(
            results[framework], results["pytorch"], rtol=1e-4, atol=1e-5, err_msg=framework
        )
