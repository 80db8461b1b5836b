"""Masked softmax, additive and scaled dot-product attention (Attention Scoring Functions), in every framework."""

import numpy as np
import pytest

from d2lcore.convert import to_numpy


def numpy_masked_softmax(X, valid_lens):
    """The definition, written directly: softmax over the first valid_len keys, zeros after."""
    X = np.asarray(X, dtype=np.float64)
    batch, queries, keys = X.shape
    lens = np.broadcast_to(np.asarray(valid_lens).reshape(batch, -1), (batch, queries))
    out = np.zeros_like(X)
    for b in range(batch):
        for i in range(queries):
            n = min(int(lens[b, i]), keys)
            if n:
                e = np.exp(X[b, i, :n] - X[b, i, :n].max())
                out[b, i, :n] = e / e.sum()
    return out


def eval_call(framework, layer, *args):
    """Call a layer in evaluation mode (dropout off); MXNet layers are initialised first."""
    if framework == "pytorch":
        layer.eval()
    if framework == "mxnet" and not getattr(layer, "_initialised", False):
        layer.initialize()  # MXNet creates parameters only on request (shapes on first call)
        layer._initialised = True
    # MXNet layers are in evaluation mode outside autograd.record(), Keras without training=True
    return layer(*args)


RNG = np.random.default_rng(0)
SCORES = RNG.normal(size=(2, 3, 5)).astype(np.float32)


@pytest.mark.parametrize(
    "valid_lens",
    [None, [2, 3], [[1, 3, 5], [2, 4, 1]], [0, 7], [[0, 2, 9], [5, 0, 1]]],
    ids=["none", "per-example", "per-query", "zero-and-long", "per-query-zero-and-long"],
)
def test_masked_softmax_matches_numpy(d2l, tensor, valid_lens):
    X = tensor(SCORES)
    lens = None if valid_lens is None else tensor(np.array(valid_lens, dtype=np.int32))
    got = to_numpy(d2l.masked_softmax(X, lens))
    expected = numpy_masked_softmax(SCORES, [5, 5] if valid_lens is None else valid_lens)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert not np.isnan(got).any()
    # masked keys get exactly zero, not merely a small weight
    assert (got[expected == 0] == 0).all()


def test_masked_softmax_accepts_whole_float_lengths(d2l, tensor):
    got = to_numpy(d2l.masked_softmax(tensor(SCORES), tensor(np.array([2.0, 3.0], np.float32))))
    np.testing.assert_allclose(got, numpy_masked_softmax(SCORES, [2, 3]), atol=1e-6)


@pytest.mark.parametrize(
    "valid_lens, message",
    [
        (np.array([2.5, 3.0], np.float32), "whole numbers"),
        (np.array([-1, 3], np.int32), ">= 0"),
        (np.array([2, 3, 4], np.int32), "valid_lens must have shape"),
        (np.array([[1, 2], [3, 4]], np.int32), "valid_lens must have shape"),
        (np.ones((2, 3, 1), np.int32), "valid_lens must have shape"),
    ],
    ids=["fractional", "negative", "wrong-batch", "wrong-queries", "rank-3"],
)
def test_masked_softmax_rejects_bad_lengths(d2l, tensor, valid_lens, message):
    with pytest.raises(ValueError, match=message):
        d2l.masked_softmax(tensor(SCORES), tensor(valid_lens))


def test_masked_softmax_rejects_wrong_rank(d2l, tensor):
    with pytest.raises(ValueError, match="X must have 3 dimension"):
        d2l.masked_softmax(tensor(SCORES[0]), tensor(np.array([2, 3], np.int32)))


def gradient_of_weighted_sum(framework, d2l, X, valid_lens, coeffs):
    """d/dX of sum(coeffs * masked_softmax(X, valid_lens))."""
    if framework == "pytorch":
        import torch

        X = torch.tensor(X, requires_grad=True)
        (d2l.masked_softmax(X, torch.tensor(valid_lens)) * torch.tensor(coeffs)).sum().backward()
        return X.grad.numpy()
    if framework == "mxnet":
        from mxnet import autograd
        from mxnet import np as mnp

        X = mnp.array(X)
        X.attach_grad()
        with autograd.record():
            y = (d2l.masked_softmax(X, mnp.array(valid_lens)) * mnp.array(coeffs)).sum()
        y.backward()
        return X.grad.asnumpy()
    import tensorflow as tf

    X = tf.Variable(X)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(d2l.masked_softmax(X, tf.constant(valid_lens)) * coeffs)
    return tape.gradient(y, X).numpy()


def test_masked_keys_get_zero_gradient(framework, d2l):
    lens = np.array([[1, 3, 5], [2, 0, 4]], np.int32)
    coeffs = RNG.normal(size=SCORES.shape).astype(np.float32)
    grad = gradient_of_weighted_sum(framework, d2l, SCORES, lens, coeffs)
    masked = np.arange(5)[None, None, :] >= lens[:, :, None]
    assert np.isfinite(grad).all()
    assert (grad[masked] == 0).all()
    assert (np.abs(grad[~masked]) > 0).any()
    # the valid entries' gradient is the softmax Jacobian applied to coeffs
    w = numpy_masked_softmax(SCORES, lens)
    expected = w * (coeffs - (w * coeffs).sum(-1, keepdims=True))
    np.testing.assert_allclose(grad, expected, atol=1e-6)


def toy_inputs(tensor, query_size):
    """The syllabus' example: 2 examples, 10 identical keys, values 0..39 as 10 rows of 4."""
    rng = np.random.default_rng(1)
    queries = rng.normal(size=(2, 1, query_size)).astype(np.float32)
    keys = np.ones((2, 10, 2), np.float32)
    values = np.tile(np.arange(40, dtype=np.float32).reshape(1, 10, 4), (2, 1, 1))
    lens = np.array([2, 6], np.int32)
    return tensor(queries), tensor(keys), tensor(values), tensor(lens)


@pytest.mark.parametrize("layer", ["additive", "dot-product"])
def test_equal_keys_average_the_first_valid_values(framework, d2l, tensor, layer):
    """All keys are equal, so the weights are uniform over the valid keys and the output is the
    mean of the first 2 (resp. 6) value rows: [2, 3, 4, 5] and [10, 11, 12, 13]."""
    if layer == "additive":
        attention, q = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1), 20
    else:
        attention, q = d2l.DotProductAttention(dropout=0.5), 2
    out = to_numpy(eval_call(framework, attention, *toy_inputs(tensor, q)))
    np.testing.assert_allclose(out, [[[2, 3, 4, 5]], [[10, 11, 12, 13]]], rtol=1e-6)
    weights = to_numpy(attention.attention_weights)
    assert weights.shape == (2, 1, 10)
    np.testing.assert_allclose(weights[0, 0], [0.5] * 2 + [0] * 8, atol=1e-7)
    np.testing.assert_allclose(weights[1, 0], [1 / 6] * 6 + [0] * 4, atol=1e-7)


def test_scaled_scores_have_unit_variance(framework, d2l, tensor):
    """q.k summed over d unit-variance terms has variance d; dividing by sqrt(d) restores 1."""
    rng = np.random.default_rng(2)
    d, n = 256, 64
    queries = rng.standard_normal((8, n, d)).astype(np.float32)
    keys = rng.standard_normal((8, n, d)).astype(np.float32)
    attention = d2l.DotProductAttention(dropout=0.0)
    eval_call(framework, attention, tensor(queries), tensor(keys), tensor(keys))
    weights = to_numpy(attention.attention_weights).astype(np.float64)
    scores = np.log(weights)  # log-softmax = scores minus a per-row constant
    scores -= scores.mean(-1, keepdims=True)
    variance = scores.var(-1, ddof=1).mean()
    # 8 * 64 rows of 64 scores: the estimate is within a few percent of 1
    assert abs(variance - 1) < 0.05, variance
    unscaled = (queries @ keys.transpose(0, 2, 1)).var()
    assert abs(unscaled / d - 1) < 0.05


def test_dropout_is_off_in_evaluation_and_on_in_training(framework, d2l, tensor):
    q, k, v, lens = toy_inputs(tensor, 2)
    attention = d2l.DotProductAttention(dropout=0.5)
    first = to_numpy(eval_call(framework, attention, q, k, v, lens))
    np.testing.assert_allclose(first, to_numpy(eval_call(framework, attention, q, k, v, lens)))
    if framework == "pytorch":
        attention.train()
        trained = attention(q, k, v, lens)
    elif framework == "mxnet":
        from mxnet import autograd

        with autograd.record():
            trained = attention(q, k, v, lens)
    else:
        trained = attention(q, k, v, lens, training=True)
    assert not np.allclose(to_numpy(trained), first)


def test_attention_layers_check_shapes(d2l, tensor):
    q, k, v, lens = toy_inputs(tensor, 2)
    with pytest.raises(ValueError, match="values must have shape"):
        d2l.DotProductAttention(0.0)(q, k, tensor(np.ones((2, 9, 4), np.float32)), lens)
    with pytest.raises(ValueError, match="keys must have shape"):
        d2l.DotProductAttention(0.0)(q, tensor(np.ones((2, 10, 3), np.float32)), v, lens)
    with pytest.raises(ValueError, match="queries must have 3 dimension"):
        d2l.AdditiveAttention(4, 0.0)(tensor(np.ones((2, 20), np.float32)), k, v, lens)


def test_tensorflow_masked_softmax_inside_tf_function():
    import tensorflow as tf

    from d2lcore import tensorflow as d2l

    spec = [tf.TensorSpec((None, 3, 5), tf.float32), tf.TensorSpec((None,), tf.int32)]
    compiled = tf.function(d2l.masked_softmax, input_signature=spec)
    got = compiled(tf.constant(SCORES), tf.constant([2, 3])).numpy()
    np.testing.assert_allclose(got, numpy_masked_softmax(SCORES, [2, 3]), atol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match=">= 0"):
        compiled(tf.constant(SCORES), tf.constant([-1, 3]))


def test_pytorch_masked_softmax_of_many_short_rows():
    """PyTorch's masked_softmax on 640 rows of 10 keys with scores of scale 30 (many weights near
    float32's underflow): the numbers of the definition, exact zeros and zero gradient for the
    masked keys, rows of zeros for a length of 0, finite gradients."""
    torch = pytest.importorskip("torch")
    from d2lcore.torch import attention

    rng = np.random.default_rng(1)
    scores = rng.normal(scale=30.0, size=(64, 10, 10)).astype(np.float32)  # 640 rows
    X = torch.tensor(scores, requires_grad=True)
    for shape, empty in [(64, False), (64, True), ((64, 10), False), ((64, 10), True)]:
        lens = rng.integers(1, 12, size=shape)
        if empty:
            lens[0] = 0  # one example without a valid key
        weights = attention.masked_softmax(X, torch.tensor(lens))
        want = numpy_masked_softmax(scores, lens)
        assert np.allclose(weights.detach().numpy(), want, atol=1e-6)
        masked = want == 0
        assert (weights.detach().numpy()[masked] == 0).all()  # exact zeros
        (grad,) = torch.autograd.grad((weights * torch.randn(weights.shape)).sum(), X)
        outside = np.broadcast_to(
            np.arange(10) >= np.asarray(lens).reshape(64, -1, 1), scores.shape
        )
        assert (grad.numpy()[outside] == 0).all()
        assert np.isfinite(grad.numpy()).all()
