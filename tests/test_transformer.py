"""The Transformer (its three pages): its layers against NumPy and the syllabus demos, the same
function in every framework with the same weights, causal decoding step by step through the
caches, the positions of the steps at inference, padding masks, clear errors and gradients."""

import functools
import importlib
import math

import numpy as np
import pytest

from d2lcore import MODULE_OF
from d2lcore.convert import to_numpy
from d2lcore.transformer import LAYER_NORM_EPS
from tests.conftest import make_tensor

INDEX_DTYPE = {"mxnet": np.int32, "pytorch": np.int64, "tensorflow": np.int32}
H, FFN, HEADS, LAYERS = 12, 20, 3, 2  # num_hiddens, ffn_num_hiddens, num_heads, num_layers
SRC_VOCAB, TGT_VOCAB, MAX_LEN = 13, 11, 40

RNG = np.random.default_rng(7)
X_IN = RNG.normal(size=(2, 5, H)).astype(np.float32)  # a block's input, positions 0 ... 4
Y_IN = RNG.normal(size=(2, 5, H)).astype(np.float32)
X_NEXT = RNG.normal(size=(2, 3, H)).astype(np.float32)  # the next positions, 5 ... 7
ENC = RNG.normal(size=(2, 7, H)).astype(np.float32)  # encoder outputs (batch, src_steps, H)
ENC_LENS = np.array([7, 4])
SRC = RNG.integers(0, SRC_VOCAB, (2, 7))
TGT = RNG.integers(0, TGT_VOCAB, (2, 6))
BLOCK_LENS = {
    "none": None,
    "per-example": np.array([5, 2]),
    "per-query": np.array([[1, 2, 3, 4, 5], [5, 1, 2, 5, 3]]),
}


def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def floats(framework, array):
    return make_tensor(framework, np.asarray(array, np.float32))


def indices(framework, array):
    if array is None:
        return None
    return make_tensor(framework, np.asarray(array).astype(INDEX_DTYPE[framework]))


def new(framework, name, *args):
    """``d2l.<name>(*args)`` of the framework; MXNet's parameters are initialised (their
    shapes are still inferred on the first call)."""
    net = getattr(module(framework), name)(*args)
    if framework == "mxnet":
        net.initialize()
    return net


def new_add_norm(framework, width, dropout):
    """AddNorm for inputs (..., width): AddNorm(dropout), or AddNorm(width, dropout) in PyTorch,
    whose nn.LayerNorm is built for its width."""
    args = (width, dropout) if framework == "pytorch" else (dropout,)
    return new(framework, "AddNorm", *args)


def new_model(framework, dropout, use_bias=False):
    """EncoderDecoder(TransformerEncoder, TransformerDecoder) with the sizes above."""
    d2l = module(framework)
    net = d2l.EncoderDecoder(
        d2l.TransformerEncoder(SRC_VOCAB, H, FFN, HEADS, LAYERS, dropout, use_bias, MAX_LEN),
        d2l.TransformerDecoder(TGT_VOCAB, H, FFN, HEADS, LAYERS, dropout, use_bias, MAX_LEN),
    )
    if framework == "mxnet":
        net.initialize()
    return net


def call(framework, net, *args, training=False, **kwargs):
    """net(*args, **kwargs) in evaluation mode (dropout off), or in training mode."""
    if framework == "pytorch":
        import torch

        net.train(training)
        with torch.no_grad():
            return net(*args, **kwargs)
    if framework == "mxnet":
        if not training:
            return net(*args, **kwargs)  # outside autograd.record(): evaluation mode
        from mxnet import autograd

        with autograd.record():
            return net(*args, **kwargs)
    return net(*args, training=training, **kwargs)


def evaluate(framework, net, *args, **kwargs):
    return call(framework, net, *args, training=False, **kwargs)


def flat(*results):
    """Every tensor in ``results`` (nested tuples and lists), as NumPy arrays; Nones dropped."""
    arrays = []
    for result in results:
        if isinstance(result, (tuple, list)):
            arrays.extend(flat(*result))
        elif result is not None:
            arrays.append(to_numpy(result))
    return arrays


def randomise(d2l, net, seed=0):
    """Give the (built) ``net`` random weights and return them. Default values (zero biases,
    layer-norm gammas of 1 and betas of 0) would hide a swapped or misplaced entry. Matrices
    (out, in) are N(0, 1 / in), so that no sublayer drowns the others; gammas 1 + N(0, 0.09),
    biases and betas N(0, 0.09)."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, w in d2l.export_weights(net).items():
        if w.ndim == 2:
            w = rng.normal(scale=1 / math.sqrt(w.shape[1]), size=w.shape)
        else:
            w = rng.normal(scale=0.3, size=w.shape) + name.endswith("ln.weight")
        weights[name] = w.astype(np.float32)
    d2l.load_weights(net, weights)
    return weights


def numpy_layer_norm(Z, gamma=1.0, beta=0.0, eps=LAYER_NORM_EPS):
    """Layer normalisation of the last axis, in float64, with the biased variance."""
    Z = np.asarray(Z, np.float64)
    mean, var = Z.mean(-1, keepdims=True), Z.var(-1, keepdims=True)
    return (Z - mean) / np.sqrt(var + eps) * gamma + beta


# --- the same function in every framework ----------------------------------------------------
# Each case: (layer, run) where run() calls the layer on fixed inputs in evaluation mode (with
# dropout 0.5, which must be off) and returns every output and attention weight as NumPy.


def ffn_case(framework):
    net = new(framework, "PositionWiseFFN", FFN, 8)
    return net, lambda: flat(evaluate(framework, net, floats(framework, X_IN)))


def addnorm_case(framework):
    net = new_add_norm(framework, H, 0.5)
    X, Y = floats(framework, X_IN), floats(framework, Y_IN)
    return net, lambda: flat(evaluate(framework, net, X, Y))


def encoder_block_case(framework, use_bias):
    net = new(framework, "TransformerEncoderBlock", H, FFN, HEADS, 0.5, use_bias)

    def run():
        results = []
        for lens in BLOCK_LENS.values():  # valid_lens None, (batch,) and (batch, steps)
            out = evaluate(framework, net, floats(framework, X_IN), indices(framework, lens))
            results += flat(out, net.attention.attention_weights)
        return results

    return net, run


def encoder_case(framework, use_bias):
    args = (SRC_VOCAB, H, FFN, HEADS, LAYERS, 0.5, use_bias, MAX_LEN)
    net = new(framework, "TransformerEncoder", *args)

    def run():
        results = []
        for lens in (None, ENC_LENS):
            out = evaluate(framework, net, indices(framework, SRC), indices(framework, lens))
            results += flat(out, net.attention_weights)
        return results

    return net, run


def decoder_block_case(framework):
    net = new(framework, "TransformerDecoderBlock", H, FFN, HEADS, 0.5)

    def run():
        results = []
        X, X_next = floats(framework, X_IN), floats(framework, X_NEXT)
        for lens in (None, ENC_LENS):
            args = (floats(framework, ENC), indices(framework, lens))
            for inputs, cache in ((X, None), (X_next, X)):  # without, then with a cache
                out = evaluate(framework, net, inputs, *args, cache)
                weights = (net.self_attention, net.cross_attention)
                results += flat(out, [w.attention_weights for w in weights])
        return results

    return net, run


def decoder_case(framework):
    args = (TGT_VOCAB, H, FFN, HEADS, LAYERS, 0.5, False, MAX_LEN)
    net = new(framework, "TransformerDecoder", *args)

    def run():
        results = []
        for lens in (None, ENC_LENS):
            state = net.init_state(floats(framework, ENC), indices(framework, lens))
            for chunk in (TGT[:, :4], TGT[:, 4:]):  # 4 tokens, then 2 more through the caches
                logits, state = evaluate(framework, net, indices(framework, chunk), state)
                results += flat(logits, state, net.attention_weights)
        return results

    return net, run


def model_case(framework):
    net = new_model(framework, 0.5)

    def run():
        args = (indices(framework, SRC), indices(framework, TGT), indices(framework, ENC_LENS))
        outputs, state = evaluate(framework, net, *args)
        weights = (net.encoder.attention_weights, net.decoder.attention_weights)
        return flat(outputs, state, weights)

    return net, run


CASES = {
    "ffn": ffn_case,
    "addnorm": addnorm_case,
    "encoder-block": functools.partial(encoder_block_case, use_bias=False),
    "encoder-block-bias": functools.partial(encoder_block_case, use_bias=True),
    "encoder": functools.partial(encoder_case, use_bias=False),
    "encoder-bias": functools.partial(encoder_case, use_bias=True),
    "decoder-block": decoder_block_case,
    "decoder": decoder_case,
    "model": model_case,
}


@functools.cache
def reference(kind):
    """The PyTorch layer of the case, built, with random weights: (weights, outputs)."""
    d2l = module("pytorch")
    d2l.set_seed(0)
    net, run = CASES[kind]("pytorch")
    run()  # infers the input sizes
    weights = randomise(d2l, net)
    return weights, run()


@pytest.mark.parametrize("kind", list(CASES))
def test_same_outputs_with_the_same_weights(d2l, framework, kind):
    """Weights made in PyTorch, loaded after one call that builds the layer: every output,
    cache and attention weight agrees within float32 rounding (for PyTorch itself: a fresh
    layer loaded with the weights reproduces them)."""
    weights, expected = reference(kind)
    d2l.set_seed(1)
    net, run = CASES[kind](framework)
    run()
    shapes = {name: w.shape for name, w in d2l.export_weights(net).items()}
    assert shapes == {name: w.shape for name, w in weights.items()}
    if kind == "model":
        assert shapes == expected_model_weights(use_bias=False)
    d2l.load_weights(net, weights)
    exported = d2l.export_weights(net)
    assert list(exported) == list(weights)  # the same names in the same order
    for name, w in exported.items():
        np.testing.assert_array_equal(w, weights[name], err_msg=name)
    got = run()
    assert [g.shape for g in got] == [e.shape for e in expected]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-5, err_msg=f"{kind}: result {i}")


def expected_model_weights(use_bias):
    """The canonical names and shapes of new_model's weights (PyTorch's names and layouts)."""
    shapes = {}

    def dense(name, n_out, n_in, bias):
        shapes[f"{name}.weight"] = (n_out, n_in)
        if bias:
            shapes[f"{name}.bias"] = (n_out,)

    def block(prefix, attentions, norms):
        for attention in attentions:
            for W in ("W_q", "W_k", "W_v", "W_o"):
                dense(f"{prefix}.{attention}.{W}", H, H, use_bias)
        for norm in norms:
            shapes[f"{prefix}.{norm}.ln.weight"] = shapes[f"{prefix}.{norm}.ln.bias"] = (H,)
        dense(f"{prefix}.ffn.dense1", FFN, H, True)
        dense(f"{prefix}.ffn.dense2", H, FFN, True)

    shapes["encoder.embedding.weight"] = (SRC_VOCAB, H)
    for i in range(LAYERS):
        block(f"encoder.blks.{i}", ["attention"], ["addnorm1", "addnorm2"])
    shapes["decoder.embedding.weight"] = (TGT_VOCAB, H)
    for i in range(LAYERS):
        block(
            f"decoder.blks.{i}",
            ["self_attention", "cross_attention"],
            ["addnorm1", "addnorm2", "addnorm3"],
        )
    dense("decoder.dense", TGT_VOCAB, H, True)
    return shapes


def test_export_names_and_shapes_of_the_whole_model(d2l, framework):
    """With use_bias=True (the model of test_same_outputs_with_the_same_weights has none)."""
    net = new_model(framework, 0.1, True)
    evaluate(framework, net, *(indices(framework, a) for a in (SRC, TGT, ENC_LENS)))
    weights = d2l.export_weights(net)
    assert {name: w.shape for name, w in weights.items()} == expected_model_weights(True)
    assert all(w.dtype == np.float32 for w in weights.values())


# --- decoding step by step -------------------------------------------------------------------


def built_decoder(framework, dropout, seed=0, max_len=MAX_LEN):
    """A TransformerDecoder with random weights, and the state for ENC and ENC_LENS."""
    d2l = module(framework)
    d2l.set_seed(seed)
    args = (TGT_VOCAB, H, FFN, HEADS, LAYERS, dropout, False, max_len)
    net = new(framework, "TransformerDecoder", *args)

    def state():
        return net.init_state(floats(framework, ENC), indices(framework, ENC_LENS))

    evaluate(framework, net, indices(framework, TGT[:, :1]), state())
    randomise(d2l, net, seed=seed)
    return net, state


def decode(framework, net, state, tokens, chunks, training=False):
    """Feed ``tokens`` (batch, steps) in chunks of the given sizes, passing the state on.
    Returns (logits (batch, steps, vocab), final state, [attention weights of each call])."""
    logits, weights, start = [], [], 0
    for size in chunks:
        chunk = indices(framework, tokens[:, start : start + size])
        out, state = call(framework, net, chunk, state, training=training)
        logits.append(to_numpy(out))
        weights.append(flat(net.attention_weights))
        start += size
    assert start == tokens.shape[1]
    return np.concatenate(logits, axis=1), state, weights


@pytest.mark.parametrize("training", [False, True], ids=["eval-dropout-0.5", "training-dropout-0"])
def test_incremental_decoding_equals_full_decoding(framework, training):
    """Decoding through the caches, one token at a time or in chunks of 2, 3 and 1 tokens,
    gives the logits, caches and attention weights of one call on the whole target. In
    training mode too (dropout 0): the causal mask must not depend on the training flag."""
    net, state = built_decoder(framework, 0.0 if training else 0.5)
    full, full_state, [(self_w, cross_w)] = decode(framework, net, state(), TGT, [6], training)
    assert full.shape == (2, 6, TGT_VOCAB)
    assert self_w.shape == (2, LAYERS, HEADS, 6, 6)
    assert cross_w.shape == (2, LAYERS, HEADS, 6, 7)
    assert (cross_w[1, ..., 4:] == 0).all()  # the source of example 1 has 4 valid tokens
    for chunks in ((1,) * 6, (2, 3, 1)):
        steps, step_state, weights = decode(framework, net, state(), TGT, chunks, training)
        np.testing.assert_allclose(steps, full, rtol=0, atol=1e-5, err_msg=str(chunks))
        # the caches: every layer's inputs at positions 0 ... 5
        caches, full_caches = flat(step_state[2]), flat(full_state[2])
        assert len(caches) == LAYERS and all(c.shape == (2, 6, H) for c in caches)
        for cache, full_cache in zip(caches, full_caches):
            np.testing.assert_allclose(cache, full_cache, rtol=0, atol=1e-5)
        # each call's attention weights are the rows of its positions in the full call
        start = 0
        for size, (self_step, cross_step) in zip(chunks, weights):
            rows, seen = slice(start, start + size), start + size
            assert self_step.shape == (2, LAYERS, HEADS, size, seen)
            np.testing.assert_allclose(self_step, self_w[..., rows, :seen], atol=1e-6)
            np.testing.assert_allclose(cross_step, cross_w[..., rows, :], atol=1e-6)
            start = seen


@pytest.mark.parametrize("training", [False, True], ids=["eval", "training"])
def test_decoder_is_causal(framework, training):
    """Changing target token t changes no logit at positions < t and changes position t's; the
    self-attention weights are lower triangular. In evaluation mode as in training mode."""
    net, state = built_decoder(framework, 0.0 if training else 0.5)
    base = to_numpy(call(framework, net, indices(framework, TGT), state(), training=training)[0])
    self_w = to_numpy(net.attention_weights[0])  # (batch, layers, heads, 6, 6)
    future = np.triu(np.ones((6, 6), bool), 1)  # key j > query i
    assert (self_w[..., future] == 0).all() and (self_w[..., ~future] > 0).all()
    np.testing.assert_allclose(self_w.sum(-1), 1, rtol=1e-5)
    for t in range(6):
        changed = TGT.copy()
        changed[:, t] = (changed[:, t] + 1) % TGT_VOCAB
        out = call(framework, net, indices(framework, changed), state(), training=training)
        out = to_numpy(out[0])
        np.testing.assert_allclose(out[:, :t], base[:, :t], rtol=0, atol=1e-6, err_msg=str(t))
        assert np.abs(out[:, t] - base[:, t]).max(-1).min() > 1e-3, t  # in each example


def test_each_step_gets_its_own_position(d2l, framework):
    """Step i's input is embedding * sqrt(H) + P[i]: the same token fed at every step gives
    different logits at each step, those of the blocks applied by hand to the embeddings plus
    the encodings of positions 0 ... 5 (if every step got position 0, a constant input, every
    step would give the same logits)."""
    net, state = built_decoder(framework, 0.5)
    tokens = np.full((2, 6), 3)
    steps, _, _ = decode(framework, net, state(), tokens, [1] * 6)
    embedding = d2l.export_weights(net)["embedding.weight"][tokens] * np.float32(math.sqrt(H))
    P = to_numpy(net.pos_encoding.P)[0]
    assert P.shape == (MAX_LEN, H)

    enc, lens = floats(framework, ENC), indices(framework, ENC_LENS)

    def by_hand(inputs):  # the decoder's blocks and dense layer, without the caches
        X = floats(framework, inputs)
        for i in range(LAYERS):
            X = evaluate(framework, net.blks[i], X, enc, lens, None)[0]
        return to_numpy(evaluate(framework, net.dense, X))

    np.testing.assert_allclose(steps, by_hand(embedding + P[:6]), rtol=0, atol=1e-5)
    for i in range(1, 6):
        assert np.abs(steps[:, i] - steps[:, i - 1]).max() > 1e-2
    ignored = by_hand(embedding + P[:1])  # what every step would give with position 0
    np.testing.assert_allclose(ignored, np.broadcast_to(ignored[:, :1], ignored.shape), atol=1e-5)
    assert np.abs(steps[:, 1:] - ignored[:, 1:]).max() > 1e-2


# --- the encoder ----------------------------------------------------------------------------


def test_encoder_ignores_padding(d2l, framework):
    """Padding keys get exactly zero weight; every row sums to 1; weights are (batch, layers,
    heads, queries, keys); tokens after the valid length change no valid position's output."""
    d2l.set_seed(0)
    net = new(framework, "TransformerEncoder", SRC_VOCAB, H, FFN, HEADS, LAYERS, 0.5)
    assert net.attention_weights is None  # before the first call
    evaluate(framework, net, indices(framework, SRC), indices(framework, ENC_LENS))  # builds
    randomise(d2l, net)
    out = to_numpy(evaluate(framework, net, indices(framework, SRC), indices(framework, ENC_LENS)))
    assert out.shape == (2, 7, H)
    weights = to_numpy(net.attention_weights)
    assert weights.shape == (2, LAYERS, HEADS, 7, 7)
    np.testing.assert_allclose(weights.sum(-1), 1, rtol=1e-5)
    assert (weights[1, ..., 4:] == 0).all()  # example 1: 4 valid tokens
    assert (weights[0] > 0).all() and (weights[1, ..., :4] > 0).all()
    padded = SRC.copy()
    padded[1, 4:] = (padded[1, 4:] + 1) % SRC_VOCAB
    again = to_numpy(
        evaluate(framework, net, indices(framework, padded), indices(framework, ENC_LENS))
    )
    np.testing.assert_allclose(again[:, :4], out[:, :4], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(again[0], out[0])
    assert np.abs(again[1, 4:] - out[1, 4:]).max() > 1e-3  # the padding positions do change


def test_encoder_scales_the_embeddings_and_adds_positions(d2l, framework):
    """A one-layer encoder = its block applied to embedding * sqrt(H) + P[:steps]."""
    d2l.set_seed(0)
    net = new(framework, "TransformerEncoder", SRC_VOCAB, H, FFN, HEADS, 1, 0.5)
    evaluate(framework, net, indices(framework, SRC))
    weights = randomise(d2l, net)
    out = to_numpy(evaluate(framework, net, indices(framework, SRC), indices(framework, ENC_LENS)))
    inputs = weights["embedding.weight"][SRC] * np.float32(math.sqrt(H))
    inputs += to_numpy(net.pos_encoding.P)[0, :7]
    blk = net.blks[0]
    expected = evaluate(framework, blk, floats(framework, inputs), indices(framework, ENC_LENS))
    np.testing.assert_allclose(out, to_numpy(expected), rtol=0, atol=1e-5)


# --- layers against NumPy and the syllabus demos ----------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 1e-3], ids=["unit", "small-variance"])
def test_addnorm_matches_numpy(d2l, framework, tensor, scale):
    """LayerNorm(X + Y) over the last axis with epsilon 1e-5 (with inputs of scale 1e-3 the
    variance is ~2e-6, so the epsilon matters: 1e-3 or 0 would give other numbers)."""
    rng = np.random.default_rng(3)
    X = (scale * rng.normal(size=(2, 3, 5))).astype(np.float32)
    Y = (scale * rng.normal(size=(2, 3, 5))).astype(np.float32)
    net = new_add_norm(framework, 5, 0.5)
    evaluate(framework, net, tensor(X), tensor(Y))
    assert {n: w.shape for n, w in d2l.export_weights(net).items()} == {
        "ln.weight": (5,),
        "ln.bias": (5,),
    }
    w = randomise(d2l, net)
    out = to_numpy(evaluate(framework, net, tensor(X), tensor(Y)))
    expected = numpy_layer_norm(X.astype(np.float64) + Y, w["ln.weight"], w["ln.bias"])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    if scale < 1:  # here the test tells epsilons apart
        for eps in (1e-3, 0):
            other = numpy_layer_norm(X.astype(np.float64) + Y, w["ln.weight"], w["ln.bias"], eps)
            assert np.abs(other - expected).max() > 0.1


def test_addnorm_rejects_different_shapes(framework, tensor):
    net = new_add_norm(framework, H, 0.5)
    with pytest.raises(
        ValueError, match="^AddNorm: AddNorm adds X and Y, so Y must have the shape of X"
    ):
        evaluate(framework, net, tensor(X_IN), tensor(X_IN[:, :3]))


def test_addnorm_dropout_applies_to_the_sublayer_output_only(framework, tensor):
    """In training mode, LayerNorm(dropout(Y) + X): with Y = 0 nothing is dropped (the result
    is LayerNorm(X) exactly as in evaluation mode); with X = 0 dropout 0.5 zeroes entries."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(2, 50, 8)).astype(np.float32)
    zeros = np.zeros_like(X)
    net = new_add_norm(framework, 8, 0.5)
    evaluate(framework, net, tensor(X), tensor(zeros))
    expected = numpy_layer_norm(X)
    out = call(framework, net, tensor(X), tensor(zeros), training=True)
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-5, atol=1e-5)
    out = to_numpy(call(framework, net, tensor(zeros), tensor(X), training=True))
    assert np.abs(out - expected).max() > 0.1
    np.testing.assert_allclose(
        to_numpy(evaluate(framework, net, tensor(zeros), tensor(X))), expected, rtol=1e-5, atol=1e-5
    )


def test_addnorm_demo_of_the_syllabus(framework, tensor):
    """ones(2, 3, 4) + ones(2, 3, 4): every row is constant, so it normalises to beta = 0."""
    net = new_add_norm(framework, 4, 0.5)
    ones = np.ones((2, 3, 4), np.float32)
    out = to_numpy(evaluate(framework, net, tensor(ones), tensor(ones)))
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, np.zeros((2, 3, 4)))


def test_layer_norm_versus_batch_norm(framework, tensor):
    """On [[1, 2], [2, 3]], layer norm normalises each row, batch norm (training mode) each
    column: +-0.5 / sqrt(0.25 + 1e-5) = +-0.99998 with each framework's own layers, epsilon
    1e-5, and AddNorm(X, 0) is the same layer norm."""
    X = np.array([[1, 2], [2, 3]], np.float32)
    if framework == "pytorch":
        import torch
        from torch import nn

        ln, bn = nn.LayerNorm(2, eps=1e-5), nn.BatchNorm1d(2, eps=1e-5).train()
        with torch.no_grad():
            layer, batch = ln(tensor(X)), bn(tensor(X))
    elif framework == "mxnet":
        from mxnet import autograd
        from mxnet.gluon import nn

        ln, bn = nn.LayerNorm(epsilon=1e-5), nn.BatchNorm(epsilon=1e-5)
        ln.initialize()
        bn.initialize()
        layer = ln(tensor(X))
        with autograd.record():  # training mode: the batch's statistics
            batch = bn(tensor(X))
    else:
        import keras

        layer = keras.layers.LayerNormalization(epsilon=1e-5)(tensor(X))
        batch = keras.layers.BatchNormalization(epsilon=1e-5)(tensor(X), training=True)
    e = 0.5 / math.sqrt(0.25 + 1e-5)
    assert abs(e - 0.99998) < 1e-6
    np.testing.assert_allclose(to_numpy(layer), [[-e, e], [-e, e]], rtol=0, atol=1e-6)
    np.testing.assert_allclose(to_numpy(batch), [[-e, -e], [e, e]], rtol=0, atol=1e-6)
    addnorm = new_add_norm(framework, 2, 0.5)
    out = evaluate(framework, addnorm, tensor(X), tensor(np.zeros_like(X)))
    np.testing.assert_allclose(to_numpy(out), [[-e, e], [-e, e]], rtol=0, atol=1e-6)


def test_position_wise_ffn(d2l, framework, tensor):
    """The syllabus demo: PositionWiseFFN(4, 8) on ones(2, 3, 4) -> (2, 3, 8), the same row at
    every position; and relu(X W1^T + b1) W2^T + b2 with the exported weights."""
    d2l.set_seed(0)
    net = new(framework, "PositionWiseFFN", 4, 8)
    out = to_numpy(evaluate(framework, net, tensor(np.ones((2, 3, 4), np.float32))))
    assert out.shape == (2, 3, 8)
    np.testing.assert_array_equal(out, np.broadcast_to(out[0, 0], (2, 3, 8)))
    w = randomise(d2l, net)
    assert {n: a.shape for n, a in w.items()} == {
        "dense1.weight": (4, 4),
        "dense1.bias": (4,),
        "dense2.weight": (8, 4),
        "dense2.bias": (8,),
    }
    X = np.random.default_rng(4).normal(size=(2, 3, 4)).astype(np.float32)
    hidden = np.maximum(X @ w["dense1.weight"].T + w["dense1.bias"], 0)
    assert 0 < (hidden == 0).mean() < 1  # the ReLU cuts some units, not all
    expected = hidden @ w["dense2.weight"].T + w["dense2.bias"]
    got = to_numpy(evaluate(framework, net, tensor(X)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_encoder_block_demo_of_the_syllabus(d2l, framework, tensor):
    """EncoderBlock(24, 48, 8, 0.5) on ones(2, 100, 24), valid_lens [3, 2] -> (2, 100, 24).
    Identical inputs give identical rows, spread evenly over the 3 (or 2) valid keys; the last
    layer norm leaves each row with mean 0 and variance ~1 (gamma 1, beta 0)."""
    d2l.set_seed(0)
    net = new(framework, "TransformerEncoderBlock", 24, 48, 8, 0.5)
    X = np.ones((2, 100, 24), np.float32)
    out = to_numpy(evaluate(framework, net, tensor(X), indices(framework, [3, 2])))
    assert out.shape == (2, 100, 24)
    np.testing.assert_allclose(out, np.broadcast_to(out[0, 0], out.shape), atol=1e-5)
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(out.var(-1), 1, atol=1e-3)
    weights = to_numpy(net.attention.attention_weights)
    expected = np.zeros((2, 8, 100, 100))
    expected[0, ..., :3], expected[1, ..., :2] = 1 / 3, 1 / 2
    np.testing.assert_allclose(weights, expected, atol=1e-6)


def test_encoder_demo_of_the_syllabus(d2l, framework):
    """Encoder(200, 24, 48, 8, 2, 0.5) on ones(2, 100), valid_lens [3, 2] -> (2, 100, 24)."""
    d2l.set_seed(0)
    net = new(framework, "TransformerEncoder", 200, 24, 48, 8, 2, 0.5)
    X = indices(framework, np.ones((2, 100)))
    out = to_numpy(evaluate(framework, net, X, indices(framework, [3, 2])))
    assert out.shape == (2, 100, 24)
    weights = to_numpy(net.attention_weights)
    assert weights.shape == (2, 2, 8, 100, 100)
    assert (weights[0, ..., 3:] == 0).all() and (weights[1, ..., 2:] == 0).all()
    np.testing.assert_allclose(weights.sum(-1), 1, rtol=1e-5)
    # the positions differ, so the outputs do (a constant token at every position)
    assert np.abs(out[:, 1:] - out[:, :-1]).max(-1).min() > 1e-3


# --- clear errors ----------------------------------------------------------------------------


def test_num_hiddens_must_be_divisible_by_num_heads(d2l):
    layers = {
        "TransformerEncoderBlock": (10, 8, 3, 0.0),
        "TransformerDecoderBlock": (10, 8, 3, 0.0),
        "TransformerEncoder": (20, 10, 8, 3, 1, 0.0),
        "TransformerDecoder": (20, 10, 8, 3, 1, 0.0),
    }
    for name, args in layers.items():
        with pytest.raises(ValueError, match=r"num_hiddens \(10\) must be divisible by num_heads"):
            getattr(d2l, name)(*args)


def test_inputs_must_have_num_hiddens_features(framework, tensor):
    encoder_blk = new(framework, "TransformerEncoderBlock", H, FFN, HEADS, 0.0)
    narrow = tensor(X_IN[..., :8])
    width = rf"num_hiddens\) = \(.*, {H}\); got shape .*\(num_hiddens = {H} from the layer\)"
    with pytest.raises(ValueError, match=rf"^TransformerEncoderBlock: X must have shape .*{width}"):
        evaluate(framework, encoder_blk, narrow, None)
    decoder_blk = new(framework, "TransformerDecoderBlock", H, FFN, HEADS, 0.0)
    enc = tensor(ENC)
    with pytest.raises(ValueError, match=rf"^TransformerDecoderBlock: X must have shape .*{width}"):
        evaluate(framework, decoder_blk, narrow, enc, None, None)
    with pytest.raises(ValueError, match=rf"enc_outputs must have shape .*{width}"):
        evaluate(framework, decoder_blk, tensor(X_IN), tensor(ENC[..., :8]), None, None)
    with pytest.raises(ValueError, match=rf"cache must have shape .*{width}"):
        evaluate(framework, decoder_blk, tensor(X_IN), enc, None, narrow)
    with pytest.raises(
        ValueError, match=r"enc_outputs must have shape .*\(batch = 2 from the other arguments\)"
    ):
        evaluate(framework, decoder_blk, tensor(X_IN), tensor(ENC[:1]), None, None)
    with pytest.raises(
        ValueError, match=r"X must have 3 dimension\(s\), shape \(batch, steps, num_hiddens\)"
    ):
        evaluate(framework, encoder_blk, tensor(X_IN[0]), None)  # no batch axis


def test_sequences_longer_than_max_len(framework):
    encoder = new(framework, "TransformerEncoder", SRC_VOCAB, H, FFN, HEADS, 1, 0.0, False, 6)
    evaluate(framework, encoder, indices(framework, SRC[:, :6]))  # 6 positions fit
    with pytest.raises(ValueError, match="max_len"):
        evaluate(framework, encoder, indices(framework, SRC))  # 7 do not
    net, state = built_decoder(framework, 0.0, max_len=6)
    with pytest.raises(ValueError, match="max_len"):
        evaluate(framework, net, indices(framework, np.zeros((2, 7))), state())
    _, full_state, _ = decode(framework, net, state(), TGT, [2, 4])  # positions 0 ... 5
    with pytest.raises(ValueError, match="max_len"):  # position 6, through the caches
        evaluate(framework, net, indices(framework, TGT[:, :1]), full_state)
    _, part_state, _ = decode(framework, net, state(), TGT[:, :4], [4])
    with pytest.raises(ValueError, match="max_len"):  # positions 4 ... 6
        evaluate(framework, net, indices(framework, TGT[:, :3]), part_state)


def test_wrong_decoder_states(framework, tensor):
    net, state = built_decoder(framework, 0.0)
    X = indices(framework, TGT[:, :2])
    enc, lens = tensor(ENC), indices(framework, ENC_LENS)
    cache = tensor(X_IN[:, :2])
    bad_states = {
        "a tuple \\(enc_outputs, enc_valid_lens, caches\\)": [(enc, lens), enc],
        f"num_layers = {LAYERS} entries": [(enc, lens, (None,)), (enc, lens, None)],
        "a mix": [(enc, lens, (None, cache))],
        r"caches must have shape \(batch, past, num_hiddens\)": [
            (enc, lens, (cache, tensor(X_IN[:, :3])))
        ],
        "from the other arguments": [
            (tensor(ENC[:1]), None, (None, None)),
            (enc, lens, (cache[:1],) * 2),
        ],
        "enc_valid_lens": [(enc, indices(framework, [3, 2, 1]), (None, None))],
    }
    for message, states in bad_states.items():
        for bad in states:
            with pytest.raises((TypeError, ValueError), match=message):
                evaluate(framework, net, X, bad)
    with pytest.raises(
        ValueError, match="batch = 3 from the other arguments"
    ):  # 3 examples, a state for 2
        evaluate(framework, net, indices(framework, np.zeros((3, 2))), state())
    with pytest.raises(ValueError, match="num_hiddens"):
        net.init_state(tensor(ENC[..., :8]), lens)
    good = net.init_state(enc, lens)
    assert len(good) == 3 and tuple(good[2]) == (None,) * LAYERS


# --- gradients and translation ----------------------------------------------------------------


def gradients(framework, net, cotangent):
    """{parameter: gradient of sum(logits * cotangent)} in training mode (dropout 0)."""
    args = [indices(framework, a) for a in (SRC, TGT, ENC_LENS)]
    if framework == "pytorch":
        import torch

        net.train()
        (net(*args)[0] * torch.tensor(cotangent)).sum().backward()
        return {name: p.grad.numpy() for name, p in net.named_parameters()}
    if framework == "mxnet":
        from mxnet import autograd
        from mxnet import np as mnp

        net(*args)  # infers the parameters' shapes
        with autograd.record():
            loss = (net(*args)[0] * mnp.array(cotangent)).sum()
        loss.backward()
        params = net.collect_params().items()
        return {name: p.grad().asnumpy() for name, p in params if p.grad_req != "null"}
    import tensorflow as tf

    net(*args)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(net(*args, training=True)[0] * cotangent)
    variables = net.trainable_variables
    grads = tape.gradient(loss, variables)
    return {v.path: tf.convert_to_tensor(g).numpy() for v, g in zip(variables, grads)}


def test_every_parameter_gets_a_gradient(d2l, framework):
    d2l.set_seed(0)
    net = new_model(framework, 0.0)
    cotangent = np.random.default_rng(5).normal(size=(2, 6, TGT_VOCAB)).astype(np.float32)
    grads = gradients(framework, net, cotangent)
    assert len(grads) == len(expected_model_weights(False))
    for name, grad in grads.items():
        assert np.isfinite(grad).all(), name
        assert np.abs(grad).max() > 0, name


def test_greedy_translation_decodes_step_by_step(d2l, framework):
    """predict_seq2seq feeds one token per call through the caches: its tokens are the argmax
    of one call on <bos> + those tokens, and it saves each step's last query."""
    reserved = ["<pad>", "<bos>", "<eos>"]
    src_vocab = d2l.Vocab([f"s{i}" for i in range(SRC_VOCAB - 4)] * 2, 2, reserved)
    tgt_vocab = d2l.Vocab([f"t{i}" for i in range(TGT_VOCAB - 4)] * 2, 2, reserved)
    assert (len(src_vocab), len(tgt_vocab)) == (SRC_VOCAB, TGT_VOCAB)
    d2l.set_seed(0)
    net = new_model(framework, 0.5)
    evaluate(framework, net, *(indices(framework, a) for a in (SRC, TGT, ENC_LENS)))
    randomise(d2l, net, seed=3)
    sentence, num_steps = "s1 s2 s3", 8
    translation, attention = d2l.predict_seq2seq(
        net, sentence, src_vocab, tgt_vocab, num_steps, d2l.cpu(), save_attention_weights=True
    )
    tokens = tgt_vocab[translation.split()]
    n = len(attention)  # the steps taken, the <eos> step included
    assert n == min(len(tokens) + 1, num_steps)
    for step, (self_w, cross_w) in enumerate(attention):
        assert self_w.shape == (LAYERS, HEADS, step + 1)
        assert cross_w.shape == (LAYERS, HEADS, num_steps)
        assert (cross_w[..., 4:] == 0).all()  # 3 tokens + <eos>
        np.testing.assert_allclose(self_w.sum(-1), 1, rtol=1e-5)
    src = np.array([src_vocab[["s1", "s2", "s3", "<eos>"]] + [src_vocab["<pad>"]] * 4])
    dec_X = np.array([[tgt_vocab["<bos>"], *tokens][:n]])
    args = [indices(framework, a) for a in (src, dec_X, [4])]
    logits = to_numpy(evaluate(framework, net, *args)[0])
    predicted = logits[0].argmax(-1).tolist()
    expected = tokens + [tgt_vocab["<eos>"]] if n > len(tokens) else tokens
    assert predicted == expected


def test_blocks_take_keyword_arguments(d2l, framework):
    """Every framework's blocks take their optional arguments by name (MXNet's Gluon blocks take positional ones
    only, so d2lcore's MXNet blocks bind keywords themselves): the same results as positional calls."""
    encoder_blk = new(framework, "TransformerEncoderBlock", H, FFN, HEADS, 0.5)
    decoder_blk = new(framework, "TransformerDecoderBlock", H, FFN, HEADS, 0.5)
    X, enc = floats(framework, X_IN), floats(framework, ENC)
    lens = indices(framework, ENC_LENS)
    by_name = flat(evaluate(framework, encoder_blk, X, valid_lens=lens))
    assert all(
        np.array_equal(a, b)
        for a, b in zip(by_name, flat(evaluate(framework, encoder_blk, X, lens)))
    )
    out, cache = evaluate(framework, decoder_blk, X, enc, lens)
    by_name = flat(evaluate(framework, decoder_blk, X, enc, enc_valid_lens=lens, cache=cache))
    positional = flat(evaluate(framework, decoder_blk, X, enc, lens, cache))
    assert len(by_name) == 2 and all(
        np.array_equal(a, b) for a, b in zip(by_name, positional, strict=True)
    )


def test_tensorflow_decoder_graph_refuses_cached_positions_beyond_max_len():
    """Inside a graph where the caches' length is unknown, the TransformerDecoder's checks
    assert that the cached and the new positions fit in max_len (the positional table's
    slice would otherwise come out short): a ValueError through graph_errors."""
    tf = pytest.importorskip("tensorflow")
    import d2lcore.tensorflow as d2l
    from d2lcore.tensorflow.tensors import graph_errors

    decoder = d2l.TransformerDecoder(10, 8, 16, 2, 2, 0.0, max_len=5)
    enc = tf.zeros((1, 3, 8))
    state = decoder.init_state(enc, tf.constant([3]))
    X = tf.ones((1, 1), tf.int32)
    decoder(X, state)  # builds the weights
    cache_spec = tf.TensorSpec((1, None, 8), tf.float32)

    @tf.function(input_signature=[tf.TensorSpec((1, None), tf.int32), cache_spec, cache_spec])
    def step(X, cache1, cache2):
        logits, _ = decoder(X, (enc, tf.constant([3]), (cache1, cache2)))
        return logits

    fits = tf.zeros((1, 3, 8))
    assert tuple(step(tf.ones((1, 2), tf.int32), fits, fits).shape) == (1, 2, 10)
    with pytest.raises(ValueError, match="max_len = 5 positions with the cached ones"):
        with graph_errors():
            step(tf.ones((1, 3), tf.int32), fits, fits)
