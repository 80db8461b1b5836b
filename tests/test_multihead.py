"""Multi-head attention (Multi-Head Attention): the head reshapes, values against a direct NumPy computation,
gradients, and agreement with PyTorch's and Keras's own multi-head attention."""

import math

import numpy as np
import pytest

from d2lcore.convert import to_numpy
from tests.conftest import make_tensor

RNG = np.random.default_rng(5)
Q = RNG.normal(size=(2, 4, 7)).astype(np.float32)  # (batch, queries, q)
K = RNG.normal(size=(2, 6, 5)).astype(np.float32)  # (batch, keys, k)
V = RNG.normal(size=(2, 6, 3)).astype(np.float32)  # (batch, keys, v)
NUM_HIDDENS, NUM_HEADS = 12, 3
MASKS = {
    "none": None,
    "per-example": [3, 2],
    "per-query": [[1, 2, 6, 4], [5, 9, 3, 1]],
}


def numpy_masked_softmax(scores, lens):
    """Softmax over the first lens[i] entries of each row of scores (queries, keys), zeros after."""
    out = np.zeros_like(scores)
    for i, n in enumerate(lens):
        n = min(int(n), scores.shape[1])
        e = np.exp(scores[i, :n] - scores[i, :n].max())
        out[i, :n] = e / e.sum()
    return out


def numpy_mha(weights, queries, keys, values, valid_lens, num_heads):
    """Multi-head attention written out head by head, in float64, from exported weights: head i
    uses features i * d ... i * d + d - 1 of the projections, and every head of example b uses
    example b's valid lengths. Returns (output, per-head weights (batch, heads, queries, keys))."""

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
        for i in range(num_heads):
            cols = slice(i * d, (i + 1) * d)
            scores = Qp[b, :, cols] @ Kp[b, :, cols].T / math.sqrt(d)
            attention[b, i] = numpy_masked_softmax(scores, lens[b])
            heads[b, :, cols] = attention[b, i] @ Vp[b, :, cols]
    return dense(heads, "W_o"), attention


def eval_call(framework, net, *args):
    """Call a layer in evaluation mode (dropout off); MXNet layers are initialised first."""
    if framework == "pytorch":
        net.eval()
    if framework == "mxnet" and not getattr(net, "_initialised", False):
        net.initialize()
        net._initialised = True
    return net(*args)


def lens_tensor(framework, valid_lens):
    if valid_lens is None:
        return None
    return make_tensor(framework, np.array(valid_lens, dtype=np.int32))


# --- transpose_qkv / transpose_output -------------------------------------------------------------


def test_transpose_qkv_puts_the_heads_of_an_example_in_consecutive_rows(d2l, tensor):
    X = RNG.normal(size=(2, 5, 12)).astype(np.float32)
    got = to_numpy(d2l.transpose_qkv(tensor(X), 3))
    assert got.shape == (6, 5, 4)
    for b in range(2):
        for i in range(3):
            # head i of example b: features 4i ... 4i + 3, at row b * num_heads + i
            np.testing.assert_array_equal(got[b * 3 + i], X[b, :, 4 * i : 4 * i + 4])


def test_transpose_output_undoes_transpose_qkv(d2l, tensor):
    X = RNG.normal(size=(3, 4, 10)).astype(np.float32)
    for num_heads in (1, 2, 5, 10):
        back = d2l.transpose_output(d2l.transpose_qkv(tensor(X), num_heads), num_heads)
        np.testing.assert_array_equal(to_numpy(back), X)
    # and the other way round, from (batch * heads, n, d)
    H = RNG.normal(size=(6, 4, 5)).astype(np.float32)
    out = to_numpy(d2l.transpose_output(tensor(H), 2))
    assert out.shape == (3, 4, 10)
    np.testing.assert_array_equal(out[1, :, 5:], H[3])  # example 1, head 1
    np.testing.assert_array_equal(to_numpy(d2l.transpose_qkv(tensor(out), 2)), H)


def test_transpose_errors(d2l, tensor):
    with pytest.raises(ValueError, match="divisible by num_heads"):
        d2l.transpose_qkv(tensor(np.zeros((2, 3, 10), np.float32)), 3)
    with pytest.raises(ValueError, match="3 dimension"):
        d2l.transpose_qkv(tensor(np.zeros((2, 10), np.float32)), 2)
    with pytest.raises(ValueError, match="multiple of num_heads"):
        d2l.transpose_output(tensor(np.zeros((5, 3, 4), np.float32)), 2)


# --- the layer -----------------------------------------------------------------------------------


def test_num_hiddens_must_be_divisible_by_num_heads(d2l):
    with pytest.raises(
        ValueError, match=r"num_hiddens \(10\) must be divisible by num_heads \(3\)"
    ):
        d2l.MultiHeadAttention(10, 3, 0.5)
    with pytest.raises(ValueError, match="num_heads must be >= 1"):
        d2l.MultiHeadAttention(10, 0, 0.5)


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "bias"])
@pytest.mark.parametrize("mask", list(MASKS))
def test_matches_numpy(d2l, framework, tensor, mask, bias):
    d2l.set_seed(0)
    net = d2l.MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, 0.5, bias=bias)
    valid_lens = MASKS[mask]
    args = (tensor(Q), tensor(K), tensor(V), lens_tensor(framework, valid_lens))
    out = to_numpy(eval_call(framework, net, *args))
    weights = d2l.export_weights(net)
    assert ("W_q.bias" in weights) == bias
    if bias:  # zero-initialised biases would not test anything: make them random
        for name in [n for n in weights if n.endswith("bias")]:
            weights[name] = RNG.normal(size=weights[name].shape).astype(np.float32)
        d2l.load_weights(net, weights)
        out = to_numpy(net(*args))
    expected, expected_weights = numpy_mha(weights, Q, K, V, valid_lens, NUM_HEADS)
    assert out.shape == (2, 4, NUM_HIDDENS)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    got_weights = to_numpy(net.attention_weights)
    assert got_weights.shape == (2, NUM_HEADS, 4, 6)
    np.testing.assert_allclose(got_weights, expected_weights, atol=1e-6)
    assert (got_weights[expected_weights == 0] == 0).all()  # masked keys: exactly 0


def test_the_syllabus_example(d2l, framework, tensor):
    """100 hiddens, 5 heads, batch 2, 4 queries, 6 identical keys, valid_lens [3, 2]: every head of
    example 0 spreads its weight evenly over 3 keys, example 1 over 2 keys."""
    d2l.set_seed(0)
    net = d2l.MultiHeadAttention(100, 5, 0.5)
    X, Y = np.ones((2, 4, 100), np.float32), np.ones((2, 6, 100), np.float32)
    out = to_numpy(eval_call(framework, net, tensor(X), tensor(Y), tensor(Y), tensor([3, 2])))
    assert out.shape == (2, 4, 100)
    weights = to_numpy(net.attention_weights)
    assert weights.shape == (2, 5, 4, 6)
    expected = np.zeros((2, 5, 4, 6))
    expected[0, :, :, :3] = 1 / 3
    expected[1, :, :, :2] = 1 / 2
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    reference, _ = numpy_mha(d2l.export_weights(net), X, Y, Y, [3, 2], 5)
    np.testing.assert_allclose(out, reference, rtol=1e-5, atol=1e-5)


def test_attention_weights_before_any_call(d2l):
    assert d2l.MultiHeadAttention(8, 2, 0.0).attention_weights is None


def test_bad_inputs(d2l, framework, tensor):
    net = d2l.MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, 0.0)
    q, k, v = tensor(Q), tensor(K), tensor(V)
    eval_call(framework, net, q, k, v)
    with pytest.raises(ValueError, match="valid_lens must have shape"):
        net(q, k, v, tensor(np.ones((2, 4, 1), np.int32)))
    with pytest.raises(ValueError, match="valid_lens"):
        net(q, k, v, tensor(np.array([1, 2, 3], np.int32)))  # 3 lengths for 2 examples
    with pytest.raises(ValueError, match="valid_lens"):
        net(q, k, v, tensor(np.ones((2, 3), np.int32)))  # 3 lengths for 4 queries
    with pytest.raises(ValueError, match="values must have shape"):
        net(q, k, tensor(V[:, :5]), None)  # 5 values for 6 keys
    with pytest.raises(ValueError, match="queries must have 3 dimension"):
        net(tensor(Q[0]), k, v, None)


def test_evaluation_mode_turns_dropout_off_and_training_mode_on(d2l, framework, tensor):
    d2l.set_seed(1)
    net = d2l.MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, 0.5)
    args = (tensor(Q), tensor(K), tensor(V), tensor([3, 2]))
    first = to_numpy(eval_call(framework, net, *args))
    np.testing.assert_array_equal(to_numpy(net(*args)), first)
    if framework == "pytorch":
        net.train()
        trained = net(*args)
    elif framework == "mxnet":
        from mxnet import autograd

        with autograd.record():
            trained = net(*args)
    else:
        trained = net(*args, training=True)
    assert np.abs(to_numpy(trained) - first).max() > 1e-3


# --- gradients -----------------------------------------------------------------------------------


def gradients(framework, net, valid_lens, cotangent):
    """d sum(out * cotangent) with respect to (every parameter by name, keys, values)."""
    lens = lens_tensor(framework, valid_lens)
    if framework == "pytorch":
        import torch

        q, k, v = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
        net.eval()
        (net(q, k, v, lens) * torch.tensor(cotangent)).sum().backward()
        params = {name: p.grad.numpy() for name, p in net.named_parameters()}
        return params, k.grad.numpy(), v.grad.numpy()
    if framework == "mxnet":
        from mxnet import autograd
        from mxnet import np as mnp

        q, k, v = (mnp.array(a) for a in (Q, K, V))
        eval_call(framework, net, q, k, v, lens)  # creates the parameters
        k.attach_grad()
        v.attach_grad()
        with autograd.record(train_mode=False):
            loss = (net(q, k, v, lens) * mnp.array(cotangent)).sum()
        loss.backward()
        params = {name: p.grad().asnumpy() for name, p in net.collect_params().items()}
        return params, k.grad.asnumpy(), v.grad.asnumpy()
    import tensorflow as tf

    q, k, v = (tf.constant(a) for a in (Q, K, V))
    net(q, k, v, lens)  # creates the variables
    with tf.GradientTape() as tape:
        tape.watch([k, v])
        loss = tf.reduce_sum(net(q, k, v, lens, training=False) * cotangent)
    variables = net.trainable_variables
    grads = tape.gradient(loss, [*variables, k, v])
    params = {var.path: g.numpy() for var, g in zip(variables, grads[:-2])}
    return params, grads[-2].numpy(), grads[-1].numpy()


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "bias"])
def test_gradients(d2l, framework, bias):
    d2l.set_seed(2)
    net = d2l.MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, 0.5, bias=bias)
    cotangent = RNG.normal(size=(2, 4, NUM_HIDDENS)).astype(np.float32)
    params, grad_k, grad_v = gradients(framework, net, [3, 2], cotangent)
    assert len(params) == (8 if bias else 4)
    for name, grad in params.items():
        assert np.isfinite(grad).all(), name
        assert np.abs(grad).max() > 0, name
    # keys 3.. of example 0 and 2.. of example 1 are masked: they cannot influence the output
    for grad in (grad_k, grad_v):
        assert (grad[0, 3:] == 0).all() and (grad[1, 2:] == 0).all()
        assert np.abs(grad[0, :3]).min() > 0 and np.abs(grad[1, :2]).min() > 0


# --- against each framework's own implementation --------------------------------------------------

TORCH_MASKS = {k: v for k, v in MASKS.items()}  # all lengths >= 1: no query attends to nothing


def random_weights(d2l, framework, bias, queries, keys, values):
    """A MultiHeadAttention (built) and its weights, biases made random."""
    d2l.set_seed(3)
    net = d2l.MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, 0.0, bias=bias)
    eval_call(framework, net, *(make_tensor(framework, a) for a in (queries, keys, values)))
    weights = d2l.export_weights(net)
    for name in weights:
        weights[name] = RNG.normal(scale=0.5, size=weights[name].shape).astype(np.float32)
    d2l.load_weights(net, weights)
    return net, weights


def key_mask(valid_lens, n_q, n_k):
    """(batch, queries, keys) booleans, True for the keys that a query may attend to."""
    if valid_lens is None:
        return np.ones((2, n_q, n_k), bool)
    lens = np.broadcast_to(np.asarray(valid_lens).reshape(2, -1), (2, n_q))
    return np.arange(n_k) < lens[..., None]


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "bias"])
@pytest.mark.parametrize("mask", list(TORCH_MASKS))
def test_pytorch_matches_torch_nn_multiheadattention(mask, bias):
    import torch

    from d2lcore import torch as d2l

    queries = RNG.normal(size=(2, 4, NUM_HIDDENS)).astype(np.float32)  # torch: q size = embed
    net, w = random_weights(d2l, "pytorch", bias, queries, K, V)
    ref = torch.nn.MultiheadAttention(
        NUM_HIDDENS, NUM_HEADS, bias=bias, batch_first=True, kdim=K.shape[-1], vdim=V.shape[-1]
    ).eval()
    with torch.no_grad():
        for ours, theirs in (("W_q", "q"), ("W_k", "k"), ("W_v", "v")):
            getattr(ref, f"{theirs}_proj_weight").copy_(torch.tensor(w[f"{ours}.weight"]))
        ref.out_proj.weight.copy_(torch.tensor(w["W_o.weight"]))
        if bias:
            ref.in_proj_bias.copy_(torch.tensor(np.concatenate([w[f"W_{x}.bias"] for x in "qkv"])))
            ref.out_proj.bias.copy_(torch.tensor(w["W_o.bias"]))
    valid_lens = TORCH_MASKS[mask]
    allowed = key_mask(valid_lens, 4, 6)
    kwargs = {}
    if mask == "per-example":
        kwargs["key_padding_mask"] = torch.tensor(~allowed[:, 0])  # True: ignore this key
    elif mask == "per-query":  # (batch * heads, queries, keys), examples' heads consecutive
        kwargs["attn_mask"] = torch.tensor(~np.repeat(allowed, NUM_HEADS, axis=0))
    q, k, v = torch.tensor(queries), torch.tensor(K), torch.tensor(V)
    with torch.no_grad():
        out = net(q, k, v, lens_tensor("pytorch", valid_lens))
        expected, expected_weights = ref(
            q, k, v, need_weights=True, average_attn_weights=False, **kwargs
        )
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        to_numpy(net.attention_weights), expected_weights.numpy(), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("mask", list(TORCH_MASKS))
def test_pytorch_matches_scaled_dot_product_attention(mask):
    """The per-head core of our layer is torch's fused scaled_dot_product_attention."""
    import torch
    import torch.nn.functional as F

    from d2lcore import torch as d2l

    net, _ = random_weights(d2l, "pytorch", True, Q, K, V)
    valid_lens = TORCH_MASKS[mask]
    allowed = torch.tensor(np.repeat(key_mask(valid_lens, 4, 6), NUM_HEADS, axis=0))
    q, k, v = torch.tensor(Q), torch.tensor(K), torch.tensor(V)
    with torch.no_grad():
        out = net(q, k, v, lens_tensor("pytorch", valid_lens))
        heads = [
            d2l.transpose_qkv(W(x), NUM_HEADS)
            for W, x in ((net.W_q, q), (net.W_k, k), (net.W_v, v))
        ]
        core = F.scaled_dot_product_attention(*heads, attn_mask=allowed)  # (batch * h, n_q, d)
        expected = net.W_o(d2l.transpose_output(core, NUM_HEADS))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "bias"])
@pytest.mark.parametrize("mask", list(TORCH_MASKS))
def test_tensorflow_matches_keras_multiheadattention(mask, bias):
    import keras
    import tensorflow as tf

    from d2lcore import tensorflow as d2l

    net, w = random_weights(d2l, "tensorflow", bias, Q, K, V)
    d = NUM_HIDDENS // NUM_HEADS
    ref = keras.layers.MultiHeadAttention(
        NUM_HEADS, key_dim=d, value_dim=d, use_bias=bias, output_shape=NUM_HIDDENS
    )
    ref(Q, V, key=K)  # creates the variables
    for ours, dense in (("W_q", ref.query_dense), ("W_k", ref.key_dense), ("W_v", ref.value_dense)):
        # our (hiddens, in) weight -> Keras's (in, heads, d) kernel: head i = features i*d...
        dense.kernel.assign(w[f"{ours}.weight"].T.reshape(-1, NUM_HEADS, d))
        if bias:
            dense.bias.assign(w[f"{ours}.bias"].reshape(NUM_HEADS, d))
    ref.output_dense.kernel.assign(w["W_o.weight"].T.reshape(NUM_HEADS, d, NUM_HIDDENS))
    if bias:
        ref.output_dense.bias.assign(w["W_o.bias"])
    valid_lens = TORCH_MASKS[mask]
    expected, scores = ref(
        Q,
        V,
        key=K,
        attention_mask=key_mask(valid_lens, 4, 6),
        return_attention_scores=True,
        training=False,
    )
    out = net(tf.constant(Q), tf.constant(K), tf.constant(V), lens_tensor("tensorflow", valid_lens))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.attention_weights.numpy(), scores.numpy(), rtol=1e-5, atol=1e-6)
