"""Grouped-query and memory-efficient attention (Grouped-Query and Memory-Efficient Attention):
GroupedQueryAttention against a NumPy version written head by head, against MultiHeadAttention (num_kv_heads =
num_heads), the order of its groups (repeat_interleave, not tile), the three frameworks against each other with
shared weights, and PyTorch's scaled_dot_product_attention(enable_gqa=True) and Keras's GroupQueryAttention given
the same weights; tiled_attention against plain masked-softmax attention (output and log-sum-exp), with valid
lengths, causal masks, lengths that are not a multiple of the tile, and queries that see no key."""

import math

import numpy as np
import pytest

from d2lcore import FRAMEWORKS
from d2lcore.convert import to_numpy
from tests.conftest import make_tensor
from tests.test_multihead import eval_call, lens_tensor, numpy_masked_softmax

RNG = np.random.default_rng(39)
Q = RNG.normal(size=(2, 5, 7)).astype(np.float32)  # (batch, queries, q)
K = RNG.normal(size=(2, 6, 5)).astype(np.float32)  # (batch, keys, k)
V = RNG.normal(size=(2, 6, 3)).astype(np.float32)  # (batch, keys, v)
NUM_HIDDENS, NUM_HEADS = 24, 6  # heads of 4 features
MASKS = {
    "none": None,
    "per-example": [4, 2],
    "per-query": [[1, 2, 6, 4, 3], [5, 9, 3, 1, 2]],
}


def gqa_weights(num_kv_heads, bias=False, seed=0):
    """Canonical weights of a GroupedQueryAttention for the inputs Q, K, V."""
    rng = np.random.default_rng(seed)
    d = NUM_HIDDENS // NUM_HEADS
    sizes = {
        "W_q": (NUM_HIDDENS, Q.shape[-1]),
        "W_k": (num_kv_heads * d, K.shape[-1]),
        "W_v": (num_kv_heads * d, V.shape[-1]),
        "W_o": (NUM_HIDDENS, NUM_HIDDENS),
    }
    weights = {}
    for name, (out, inp) in sizes.items():
        weights[f"{name}.weight"] = rng.normal(scale=inp**-0.5, size=(out, inp)).astype(np.float32)
        if bias:
            weights[f"{name}.bias"] = rng.normal(scale=0.3, size=out).astype(np.float32)
    return weights


def numpy_gqa(weights, queries, keys, values, valid_lens, num_heads, num_kv_heads):
    """Grouped-query attention written out head by head, in float64: query head h uses features h * d ...
    h * d + d - 1 of the query projection and key-value head g = floor(h * num_kv_heads / num_heads), features
    g * d ... g * d + d - 1 of the key and value projections. Returns (output, weights (batch, heads, n_q, n_k))."""

    def dense(x, name):
        y = x.astype(np.float64) @ weights[f"{name}.weight"].T.astype(np.float64)
        return y + weights[f"{name}.bias"] if f"{name}.bias" in weights else y

    Qp, Kp, Vp = dense(queries, "W_q"), dense(keys, "W_k"), dense(values, "W_v")
    batch, n_q, hiddens = Qp.shape
    n_k, d = Kp.shape[1], hiddens // num_heads
    if valid_lens is None:
        lens = np.full((batch, n_q), n_k)
    else:
        lens = np.broadcast_to(np.asarray(valid_lens).reshape(batch, -1), (batch, n_q))
    attention = np.zeros((batch, num_heads, n_q, n_k))
    heads = np.zeros((batch, n_q, hiddens))
    for b in range(batch):
        for h in range(num_heads):
            g = h * num_kv_heads // num_heads
            q, kv = slice(h * d, (h + 1) * d), slice(g * d, (g + 1) * d)
            scores = Qp[b, :, q] @ Kp[b, :, kv].T / math.sqrt(d)
            attention[b, h] = numpy_masked_softmax(scores, lens[b])
            heads[b, :, q] = attention[b, h] @ Vp[b, :, kv]
    return dense(heads, "W_o"), attention


def built_gqa(d2l, framework, num_kv_heads, weights, dropout=0.0, bias=None):
    """A GroupedQueryAttention, built on Q, K, V and given ``weights``."""
    bias = any(name.endswith(".bias") for name in weights) if bias is None else bias
    net = d2l.GroupedQueryAttention(NUM_HIDDENS, NUM_HEADS, num_kv_heads, dropout, bias=bias)
    eval_call(framework, net, *(make_tensor(framework, a) for a in (Q, K, V)))
    d2l.load_weights(net, weights)
    return net


def call(framework, net, valid_lens, queries=Q, keys=K, values=V):
    args = [make_tensor(framework, a) for a in (queries, keys, values)]
    return to_numpy(eval_call(framework, net, *args, lens_tensor(framework, valid_lens)))


# --- grouped-query attention ---------------------------------------------------------------------


@pytest.mark.parametrize("num_kv_heads", [1, 2, 3, 6])
@pytest.mark.parametrize("mask", list(MASKS))
def test_gqa_matches_numpy(d2l, framework, num_kv_heads, mask):
    weights = gqa_weights(num_kv_heads, bias=mask == "per-query", seed=num_kv_heads)
    net = built_gqa(d2l, framework, num_kv_heads, weights)
    out = call(framework, net, MASKS[mask])
    expected, expected_weights = numpy_gqa(weights, Q, K, V, MASKS[mask], NUM_HEADS, num_kv_heads)
    assert out.shape == (2, 5, NUM_HIDDENS)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        to_numpy(net.attention_weights), expected_weights, rtol=1e-4, atol=1e-6
    )


def test_weight_shapes_and_parameter_count(d2l, framework):
    for kv, bias in ((1, False), (2, True), (6, False)):
        weights = d2l.export_weights(
            built_gqa(d2l, framework, kv, gqa_weights(kv, bias), bias=bias)
        )
        d = NUM_HIDDENS // NUM_HEADS
        assert weights["W_k.weight"].shape == (kv * d, K.shape[-1])
        assert weights["W_v.weight"].shape == (kv * d, V.shape[-1])
        assert weights["W_q.weight"].shape == weights["W_o.weight"].shape[:1] + (Q.shape[-1],)
        expected = NUM_HIDDENS * (Q.shape[-1] + NUM_HIDDENS) + kv * d * (K.shape[-1] + V.shape[-1])
        if bias:
            expected += 2 * NUM_HIDDENS + 2 * kv * d
        assert sum(w.size for w in weights.values()) == expected


def test_tensorflow_gqa_keeps_none_of_the_parents_projections():
    """TensorFlow's GroupedQueryAttention replaces MultiHeadAttention's W_k and W_v before their first call: d2lcore's
    Layer drops them, so that Keras tracks only the layers the model uses, all built, and their weights only."""
    pytest.importorskip("tensorflow")
    from d2lcore import tensorflow as d2l
    from d2lcore.tensorflow.layers import tracked_sublayers

    net = built_gqa(d2l, "tensorflow", 2, gqa_weights(2))
    sublayers = tracked_sublayers(net)
    assert sorted(id(s) for s in sublayers) == sorted(
        id(s) for s in (net.attention, net.W_q, net.W_k, net.W_v, net.W_o)
    )
    assert all(s.built for s in sublayers) and len(net.trainable_weights) == 4


@pytest.mark.parametrize("mask", list(MASKS))
def test_all_kv_heads_is_multihead_attention(d2l, framework, mask):
    """num_kv_heads = num_heads: the same weights give MultiHeadAttention's output and attention weights."""
    weights = gqa_weights(NUM_HEADS, bias=True, seed=7)
    gqa = built_gqa(d2l, framework, NUM_HEADS, weights)
    mha = d2l.MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, 0.0, bias=True)
    eval_call(framework, mha, *(make_tensor(framework, a) for a in (Q, K, V)))
    assert set(d2l.export_weights(mha)) == set(weights)
    d2l.load_weights(mha, weights)
    np.testing.assert_allclose(
        call(framework, gqa, MASKS[mask]), call(framework, mha, MASKS[mask]), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        to_numpy(gqa.attention_weights), to_numpy(mha.attention_weights), rtol=1e-5, atol=1e-7
    )


def test_one_kv_head_is_multi_query_attention(d2l, framework):
    """num_kv_heads = 1: every query head reads the same keys and values, one projection of d features each
    (Shazeer, 2019), written here directly in NumPy."""
    weights = gqa_weights(1, seed=11)
    net = built_gqa(d2l, framework, 1, weights)
    out = call(framework, net, [4, 2])
    d = NUM_HIDDENS // NUM_HEADS
    keys = K.astype(np.float64) @ weights["W_k.weight"].T  # (batch, keys, d): one head
    values = V.astype(np.float64) @ weights["W_v.weight"].T
    queries = (Q.astype(np.float64) @ weights["W_q.weight"].T).reshape(2, 5, NUM_HEADS, d)
    scores = np.einsum("bqhd,bkd->bhqk", queries, keys) / math.sqrt(d)
    scores[0, :, :, 4:] = -np.inf
    scores[1, :, :, 2:] = -np.inf
    attention = np.exp(scores - scores.max(-1, keepdims=True))
    attention /= attention.sum(-1, keepdims=True)
    heads = np.einsum("bhqk,bkd->bqhd", attention, values).reshape(2, 5, NUM_HIDDENS)
    np.testing.assert_allclose(out, heads @ weights["W_o.weight"].T, rtol=1e-4, atol=1e-5)


def test_groups_follow_repeat_interleave_not_tile(d2l, framework):
    """With 6 query heads and 2 key-value heads, query heads 0, 1, 2 read key-value head 0 and 3, 4, 5 head 1
    (np.repeat, torch.repeat_interleave), not 0, 1, 0, 1, 0, 1 (np.tile): a layer whose key-value head 1 sees
    no key beyond the first gives query heads 3, 4, 5 weights on key 0 alone."""
    weights = gqa_weights(2, seed=5)
    d = NUM_HIDDENS // NUM_HEADS
    # key-value head 1's keys: all zero except a large first feature on key 0 only: a query whose head reads it
    # puts (almost) all its weight on key 0 if its matching feature is positive
    keys = np.zeros_like(K)
    keys[:, 0, 0] = 1.0
    weights["W_k.weight"][:] = 0
    weights["W_k.weight"][d, 0] = 50.0  # feature 0 of key-value head 1
    weights["W_q.weight"][:] = 0
    weights["W_q.weight"][np.arange(NUM_HEADS) * d, 0] = 1.0  # feature 0 of every query head
    queries = Q.copy()
    queries[..., 0] = 1.0  # every query head's feature 0 is 1: a score of 50 / sqrt(4) on key 0
    net = built_gqa(d2l, framework, 2, weights)
    call(framework, net, None, queries=queries, keys=keys)
    attention = to_numpy(net.attention_weights)  # (batch, heads, queries, keys)
    on_key_0 = attention[..., 0].min(axis=(0, 2))  # per head, the smallest weight on key 0
    assert (on_key_0[3:] > 0.99).all(), on_key_0  # heads 3, 4, 5 read key-value head 1
    np.testing.assert_allclose(
        attention[:, :3], 1 / keys.shape[1], rtol=1e-5
    )  # heads 0, 1, 2: uniform


def test_gqa_valid_lens_and_masked_keys(d2l, framework):
    """A length of 0 gives zeros before W_o (no bias: zeros out); masked keys never reach the output."""
    weights = gqa_weights(2, seed=3)
    net = built_gqa(d2l, framework, 2, weights)
    out = call(framework, net, [0, 3])
    assert (out[0] == 0).all() and np.isfinite(out).all()
    keys = K.copy()
    keys[1, 3:] = 1e4  # beyond example 1's length
    np.testing.assert_allclose(call(framework, net, [0, 3], keys=keys), out, rtol=1e-6)


def test_gqa_errors(d2l):
    with pytest.raises(ValueError, match=r"num_kv_heads \(4\) must divide num_heads \(6\)"):
        d2l.GroupedQueryAttention(24, 6, 4, 0.0)
    with pytest.raises(
        ValueError, match=r"num_hiddens \(10\) must be divisible by num_heads \(4\)"
    ):
        d2l.GroupedQueryAttention(10, 4, 2, 0.0)
    with pytest.raises(ValueError, match="num_kv_heads must be >= 1"):
        d2l.GroupedQueryAttention(24, 6, 0, 0.0)


def test_three_frameworks_agree_with_shared_weights():
    """The same canonical weights and inputs give the same outputs in MXNet, PyTorch and TensorFlow."""
    import importlib

    from d2lcore import MODULE_OF

    weights = gqa_weights(3, bias=True, seed=21)
    outputs = {}
    for framework in FRAMEWORKS:
        d2l = importlib.import_module(MODULE_OF[framework])
        net = built_gqa(d2l, framework, 3, weights)
        outputs[framework] = call(framework, net, MASKS["per-query"])
    for framework in FRAMEWORKS[1:]:
        np.testing.assert_allclose(outputs[framework], outputs[FRAMEWORKS[0]], rtol=1e-5, atol=1e-6)


def test_gradients_reach_every_weight(d2l, framework):
    from tests import test_multihead

    net = d2l.GroupedQueryAttention(NUM_HIDDENS, NUM_HEADS, 2, 0.0, bias=True)
    inputs = (test_multihead.Q, test_multihead.K, test_multihead.V)  # what its gradients() reads
    eval_call(framework, net, *(make_tensor(framework, a) for a in inputs))
    cotangent = RNG.normal(size=(2, 4, NUM_HIDDENS)).astype(np.float32)
    params, grad_k, grad_v = test_multihead.gradients(framework, net, [3, 2], cotangent)
    assert len(params) == 8
    for name, grad in params.items():
        assert np.isfinite(grad).all() and np.abs(grad).max() > 0, name
    for grad in (grad_k, grad_v):  # masked keys get no gradient
        assert (grad[0, 3:] == 0).all() and (grad[1, 2:] == 0).all()


def key_mask(valid_lens, n_q, n_k):
    """(batch, queries, keys) booleans, True for the keys that a query may attend to."""
    if valid_lens is None:
        return np.ones((2, n_q, n_k), bool)
    lens = np.broadcast_to(np.asarray(valid_lens).reshape(2, -1), (2, n_q))
    return np.arange(n_k) < lens[..., None]


@pytest.mark.parametrize("num_kv_heads", [1, 2, 3])
@pytest.mark.parametrize("mask", list(MASKS))
def test_pytorch_matches_sdpa_with_enable_gqa(num_kv_heads, mask):
    """torch's scaled_dot_product_attention(enable_gqa=True) on (batch, heads, n, d) tensors with our
    projections: the same grouping (query head h reads key-value head h // group)."""
    import torch
    import torch.nn.functional as F

    from d2lcore import torch as d2l

    weights = gqa_weights(num_kv_heads, bias=True, seed=num_kv_heads + 30)
    net = built_gqa(d2l, "pytorch", num_kv_heads, weights)
    d = NUM_HIDDENS // NUM_HEADS
    q, k, v = (torch.tensor(a) for a in (Q, K, V))
    allowed = torch.tensor(key_mask(MASKS[mask], 5, 6))[:, None]  # (batch, 1, n_q, n_k)
    with torch.no_grad():
        out = net(q, k, v, lens_tensor("pytorch", MASKS[mask]))

        def heads(W, x, h):  # (batch, n, h * d) -> (batch, h, n, d)
            return W(x).reshape(2, x.shape[1], h, d).transpose(1, 2)

        core = F.scaled_dot_product_attention(
            heads(net.W_q, q, NUM_HEADS),
            heads(net.W_k, k, num_kv_heads),
            heads(net.W_v, v, num_kv_heads),
            attn_mask=allowed,
            enable_gqa=True,
        )  # (batch, heads, n_q, d)
        expected = net.W_o(core.transpose(1, 2).reshape(2, 5, NUM_HIDDENS))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("num_kv_heads", [1, 2, 3])
@pytest.mark.parametrize("mask", list(MASKS))
def test_tensorflow_matches_keras_group_query_attention(num_kv_heads, mask):
    """keras.layers.GroupQueryAttention given our weights: its kernels are (in, heads, d) and its output
    kernel (heads, d, out). Its output has as many features as its queries: the queries are padded with zeros
    to num_hiddens features, which meet zero rows of the query kernel, so that our W_o fits."""
    import keras
    import tensorflow as tf

    from d2lcore import tensorflow as d2l

    weights = gqa_weights(num_kv_heads, bias=True, seed=num_kv_heads + 40)
    net = built_gqa(d2l, "tensorflow", num_kv_heads, weights)
    d, pad = NUM_HIDDENS // NUM_HEADS, NUM_HIDDENS - Q.shape[-1]
    ref = keras.layers.GroupQueryAttention(
        head_dim=d, num_query_heads=NUM_HEADS, num_key_value_heads=num_kv_heads, use_bias=True
    )
    queries_wide = np.concatenate([Q, np.zeros((2, 5, pad), np.float32)], axis=-1)
    ref(queries_wide, V, key=K)  # creates the variables
    for ours, dense, h in (
        ("W_q", ref._query_dense, NUM_HEADS),
        ("W_k", ref._key_dense, num_kv_heads),
        ("W_v", ref._value_dense, num_kv_heads),
    ):
        kernel = weights[f"{ours}.weight"].T  # (in, h * d)
        if ours == "W_q":
            kernel = np.concatenate([kernel, np.zeros((pad, NUM_HIDDENS), np.float32)])
        # head i = features i * d ... i * d + d - 1
        dense.kernel.assign(kernel.reshape(-1, h, d))
        dense.bias.assign(weights[f"{ours}.bias"].reshape(h, d))
    ref._output_dense.kernel.assign(weights["W_o.weight"].T.reshape(NUM_HEADS, d, NUM_HIDDENS))
    ref._output_dense.bias.assign(weights["W_o.bias"])
    expected = ref(
        queries_wide, V, key=K, attention_mask=key_mask(MASKS[mask], 5, 6), training=False
    )
    out = net(
        tf.constant(Q), tf.constant(K), tf.constant(V), lens_tensor("tensorflow", MASKS[mask])
    )
    np.testing.assert_allclose(out.numpy(), np.asarray(expected), rtol=1e-5, atol=1e-5)


# --- tiled attention ----------------------------------------------------------------------------------


def numpy_attention(queries, keys, values, valid_lens, causal):
    """Plain attention in float64: (output, log-sum-exp of the scores each query sees, -inf if none)."""
    batch, n_q, d = queries.shape
    n_k = keys.shape[1]
    scores = queries.astype(np.float64) @ keys.astype(np.float64).transpose(0, 2, 1) / math.sqrt(d)
    lens = (
        np.full((batch, 1), n_k)
        if valid_lens is None
        else np.asarray(valid_lens).reshape(batch, -1)
    )
    seen = np.arange(n_k) < lens[..., None]
    if causal:
        seen = seen & (np.arange(n_k) <= np.arange(n_q)[:, None])
    seen = np.broadcast_to(seen, scores.shape)
    scores = np.where(seen, scores, -np.inf)
    top = scores.max(-1, keepdims=True)
    top = np.where(np.isinf(top), 0, top)
    e = np.exp(scores - top)
    total = e.sum(-1, keepdims=True)
    output = np.where(total > 0, e / np.where(total > 0, total, 1), 0) @ values.astype(np.float64)
    with np.errstate(divide="ignore"):
        lse = (top + np.log(total))[..., 0]
    return output, lse


TILE_CASES = {  # (n_q, n_k, tile_size, valid_lens, causal)
    "one tile": (5, 6, 8, None, False),
    "7 keys, tiles of 3": (4, 7, 3, None, False),
    "per-example lengths": (4, 7, 3, [5, 2], False),
    "per-query lengths": (3, 10, 4, [[1, 9, 10], [4, 0, 7]], False),
    "length 0": (3, 10, 4, [0, 6], False),
    "causal": (9, 9, 4, None, True),
    "causal with lengths": (9, 9, 2, [9, 5], True),
    "tile of 1": (4, 5, 1, [3, 5], True),
}


@pytest.mark.parametrize("case", list(TILE_CASES))
def test_tiled_attention_matches_plain_attention(d2l, framework, tensor, case):
    n_q, n_k, tile, valid_lens, causal = TILE_CASES[case]
    rng = np.random.default_rng(n_q * 100 + n_k)
    queries = rng.normal(size=(2, n_q, 8)).astype(np.float32) * 2
    keys = rng.normal(size=(2, n_k, 8)).astype(np.float32)
    values = rng.normal(size=(2, n_k, 3)).astype(np.float32)
    lens = None if valid_lens is None else tensor(np.array(valid_lens, np.int32))
    output, lse = d2l.tiled_attention(
        tensor(queries), tensor(keys), tensor(values), lens, causal=causal, tile_size=tile
    )
    expected, expected_lse = numpy_attention(queries, keys, values, valid_lens, causal)
    output, lse = to_numpy(output), to_numpy(lse)
    assert output.shape == (2, n_q, 3) and lse.shape == (2, n_q)
    assert not np.isnan(output).any() and not np.isnan(lse).any()
    np.testing.assert_allclose(output, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lse, expected_lse, rtol=1e-5, atol=1e-6)  # -inf where no key is seen


@pytest.mark.parametrize("causal", [False, True])
def test_tiled_attention_equals_the_books_masked_softmax_attention(d2l, framework, tensor, causal):
    """Against d2l.DotProductAttention (d2l.masked_softmax) on the same inputs: equal outputs, and the
    log-sum-exp gives back its weights, exp(score - lse)."""
    rng = np.random.default_rng(8)
    queries, keys = (rng.normal(size=(2, 11, 16)).astype(np.float32) for _ in range(2))
    values = rng.normal(size=(2, 11, 4)).astype(np.float32)
    lens = [[11, 3, 0, 7, 11, 1, 2, 9, 10, 11, 4], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]]
    if causal:  # a causal mask is a length per query: query i sees keys 0 ... i
        lens = np.minimum(np.array(lens), np.arange(1, 12))
    lens = np.array(lens, np.int32)
    attention = d2l.DotProductAttention(0.0)
    if framework == "mxnet":
        attention.initialize()
    plain = to_numpy(attention(tensor(queries), tensor(keys), tensor(values), tensor(lens)))
    output, lse = d2l.tiled_attention(
        tensor(queries), tensor(keys), tensor(values), tensor(lens), causal=causal, tile_size=4
    )
    np.testing.assert_allclose(to_numpy(output), plain, rtol=1e-5, atol=1e-6)
    scores = queries.astype(np.float64) @ keys.transpose(0, 2, 1) / 4.0
    lse = to_numpy(lse)
    finite = np.isfinite(lse)
    assert (~finite == (lens == 0)).all()  # -inf exactly where a query sees no key
    weights = np.exp(scores - np.where(finite, lse, 0)[..., None]) * (
        np.arange(11) < lens[..., None]
    )
    np.testing.assert_allclose(weights, to_numpy(attention.attention_weights), rtol=1e-4, atol=1e-6)


def test_tiled_attention_fully_masked_rows_give_zeros(d2l, framework, tensor):
    queries, keys = np.ones((2, 3, 4), np.float32), np.ones((2, 5, 4), np.float32)
    values = np.full((2, 5, 2), 7.0, np.float32)
    output, lse = d2l.tiled_attention(
        tensor(queries),
        tensor(keys),
        tensor(values),
        tensor(np.array([0, 2], np.int32)),
        tile_size=2,
    )
    output, lse = to_numpy(output), to_numpy(lse)
    assert (output[0] == 0).all() and np.isneginf(lse[0]).all()
    np.testing.assert_allclose(output[1], 7.0, rtol=1e-6)
    np.testing.assert_allclose(
        lse[1], 2.0 + math.log(2), rtol=1e-6
    )  # two scores of 4 / sqrt(4) = 2


def test_tiled_attention_three_frameworks_agree():
    import importlib

    from d2lcore import MODULE_OF

    rng = np.random.default_rng(3)
    queries, keys, values = (rng.normal(size=(3, 13, 8)).astype(np.float32) for _ in range(3))
    lens = np.array([13, 6, 1], np.int32)
    results = {}
    for framework in FRAMEWORKS:
        d2l = importlib.import_module(MODULE_OF[framework])
        args = [make_tensor(framework, a) for a in (queries, keys, values, lens)]
        results[framework] = [
            to_numpy(x) for x in d2l.tiled_attention(*args, causal=True, tile_size=5)
        ]
    for framework in FRAMEWORKS[1:]:
        for got, first in zip(results[framework], results[FRAMEWORKS[0]], strict=True):
            np.testing.assert_allclose(got, first, rtol=1e-5, atol=1e-6)


def test_tiled_attention_errors(d2l, tensor):
    X = tensor(np.ones((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="tile_size must be >= 1"):
        d2l.tiled_attention(X, X, X, tile_size=0)
    with pytest.raises(ValueError, match="keys must have shape"):
        d2l.tiled_attention(X, tensor(np.ones((2, 3, 5), np.float32)), X)
    with pytest.raises(TypeError, match="causal must be"):
        d2l.tiled_attention(X, X, X, causal="yes")


def test_pytorch_tiled_attention_matches_sdpa():
    """torch's fused scaled_dot_product_attention, causal, on the same inputs (no lengths: its causal mask
    is the same top-left one)."""
    import torch
    import torch.nn.functional as F

    from d2lcore import torch as d2l

    q, k, v = (torch.tensor(RNG.normal(size=(2, 37, 16)).astype(np.float32)) for _ in range(3))
    output, _ = d2l.tiled_attention(q, k, v, causal=True, tile_size=8)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(output.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_tensorflow_tiled_attention_matches_keras_dot_product_attention():
    """keras.ops.dot_product_attention (inputs (batch, n, heads, d)), causal."""
    import keras
    import tensorflow as tf

    from d2lcore import tensorflow as d2l

    q, k, v = (RNG.normal(size=(2, 37, 16)).astype(np.float32) for _ in range(3))
    output, _ = d2l.tiled_attention(
        tf.constant(q), tf.constant(k), tf.constant(v), causal=True, tile_size=8
    )
    expected = keras.ops.dot_product_attention(
        q[:, :, None], k[:, :, None], v[:, :, None], is_causal=True
    )
    np.testing.assert_allclose(output.numpy(), np.asarray(expected)[:, :, 0], rtol=1e-5, atol=1e-5)


# --- the committed measurement (benchmarks/efficient_attention.py) -----------------------------------------------


def test_the_committed_measurement_and_what_the_page_quotes():
    """data/measurements/efficient_attention.json holds every framework's methods at every length; attention
    written out grows at least 8 times from 1,024 to 4,096 positions (quadratic: 16), the tiled version at most 6
    times (linear: 4) and stays below a quarter of it; and every figure the page quotes is a field of its record."""
    import json
    import re
    from pathlib import Path

    from booktools.quotes import ROLE
    from booktools.split import read_source
    from d2lcore import measurements, records
    from d2lcore.plotting import plt

    root = Path(__file__).resolve().parents[1]
    data = json.loads((root / "data/measurements/efficient_attention.json").read_text())
    assert measurements.read_measurement("efficient_attention") == data
    lengths = data["settings"]["lengths"]
    points = {(r["framework"], r["method"], r["n"]): r for r in data["runs"]}
    expected = {
        (f, m, n)
        for f, methods in (
            ("mxnet", ("plain", "tiled")),
            ("pytorch", ("plain", "tiled", "fused")),
            ("tensorflow", ("plain", "tiled", "fused")),
        )
        for m in methods
        for n in lengths
    }
    assert set(points) == expected and {1024, 4096} <= set(lengths)
    for framework in ("mxnet", "pytorch", "tensorflow"):
        plain = [points[(framework, "plain", n)]["peak_growth_bytes"] for n in (1024, 4096)]
        tiled = [points[(framework, "tiled", n)]["peak_growth_bytes"] for n in (1024, 4096)]
        assert plain[1] > 8 * plain[0] and tiled[1] < 6 * tiled[0], framework
        assert tiled[1] < plain[1] / 4, framework
        # at least the scores: attention written out holds the n x n scores
        assert plain[1] >= points[(framework, "plain", 4096)]["largest_intermediate_bytes"]
    with records.collect() as shown:
        record = measurements.show_efficient_attention()
    plt.close("all")
    assert [r.name for r in shown] == ["efficient_attention"]
    assert dict(record) == measurements.efficient_attention_fields(data)
    page = read_source(root / "chapters/attention/efficient-attention.md")
    text = "\n".join(c.source for c in page.cells if c.cell_type == "markdown")
    quoted = [m["field"] for m in ROLE.finditer(text) if m["name"] == "efficient_attention"]
    assert len(quoted) >= 5 and [f for f in quoted if f not in record] == []
    code = [c.source for c in page.cells if c.cell_type == "code"]
    assert any(re.search(r"^efficient = d2l\.show_efficient_attention\(\)$", c, re.M) for c in code)
