"""fix_keys, the decoders' fast path (section 5): the keys projected once give the same
numbers as the layer's own forward, step after step, in every framework."""

import numpy as np
import pytest

from d2lcore.convert import to_numpy

from .test_attention import eval_call

RNG = np.random.default_rng(5)
KEYS = RNG.normal(size=(3, 6, 4)).astype(np.float32)  # (batch, keys, k)
VALUES = RNG.normal(size=(3, 6, 2)).astype(np.float32)  # (batch, keys, v)
QUERIES = RNG.normal(size=(4, 3, 1, 5)).astype(np.float32)  # 4 steps of (batch, 1, q)


@pytest.mark.parametrize(
    "valid_lens", [None, [2, 6, 4], [0, 9, 1]], ids=["none", "lengths", "zero-and-long"]
)
def test_fix_keys_equals_forward(framework, d2l, tensor, valid_lens):
    layer = d2l.AdditiveAttention(num_hiddens=8, dropout=0.3)
    keys, values = tensor(KEYS), tensor(VALUES)
    lens = None if valid_lens is None else tensor(np.array(valid_lens, dtype=np.int32))
    eval_call(framework, layer, tensor(QUERIES[0]), keys, values, lens)  # builds the weights
    attend = d2l.fix_keys(layer, keys, values, lens)
    for queries in QUERIES:  # one decoding step after the other, the same keys
        expected = to_numpy(eval_call(framework, layer, tensor(queries), keys, values, lens))
        expected_weights = to_numpy(layer.attention_weights)
        context, weights = attend(tensor(queries))
        np.testing.assert_allclose(to_numpy(context), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(to_numpy(weights), expected_weights, rtol=1e-5, atol=1e-6)
        assert to_numpy(weights).shape == (3, 1, 6)
    if valid_lens is not None:  # the masked keys get no weight at all
        masked = np.arange(6)[None, :] >= np.array(valid_lens)[:, None]
        assert (to_numpy(weights)[:, 0][masked] == 0).all()


def test_fix_keys_checks_its_arguments(framework, d2l, tensor):
    layer = d2l.AdditiveAttention(num_hiddens=8, dropout=0)
    if framework == "mxnet":
        layer.initialize()
    with pytest.raises(ValueError, match=r"valid_lens must have 1 dimension\(s\), shape \(batch\)"):
        d2l.fix_keys(layer, tensor(KEYS), tensor(VALUES), tensor(np.array([[1, 2]], np.int32)))
    with pytest.raises(ValueError, match="valid_lens must be >= 0"):
        d2l.fix_keys(layer, tensor(KEYS), tensor(VALUES), tensor(np.array([1, -1, 2], np.int32)))
    with pytest.raises(ValueError, match="values must have shape"):
        d2l.fix_keys(layer, tensor(KEYS), tensor(VALUES[:, :5]))
    attend = d2l.fix_keys(layer, tensor(KEYS), tensor(VALUES))
    with pytest.raises(ValueError, match="queries must have shape"):
        attend(tensor(QUERIES[0].reshape(3, 5, 1)))  # 5 queries a step, not 1
    attend(tensor(QUERIES[0]))  # a good call, then bad ones: each new shape is checked
    with pytest.raises(ValueError, match="queries's last dimension must be 5"):
        attend(tensor(np.ones((3, 1, 4), np.float32)))
    with pytest.raises(TypeError, match="queries must be a floating-point"):
        attend(tensor(QUERIES[0].astype(np.int32)))


def concat_last(framework, a, b):
    """a and b joined along their last axis, by the framework's own function."""
    if framework == "mxnet":
        from mxnet import np as mx_np

        return mx_np.concatenate((a, b), axis=-1)
    if framework == "pytorch":
        import torch

        return torch.cat((a, b), dim=-1)
    import tensorflow as tf

    return tf.concat((a, b), axis=-1)


def test_decoder_steps_equal_plain_attention(framework, d2l, tensor):
    """The decoder's loop with fix_keys gives the outputs of the same loop written with the layer's forward."""
    decoder = d2l.Seq2SeqAttentionDecoder(vocab_size=7, embed_size=3, num_hiddens=4, num_layers=2)
    encoder = d2l.Seq2SeqEncoder(vocab_size=7, embed_size=3, num_hiddens=4, num_layers=2)
    X = tensor(RNG.integers(0, 7, size=(3, 5)).astype(np.int32))
    lens = tensor(np.array([5, 2, 3], dtype=np.int32))
    if framework == "mxnet":
        encoder.initialize()
        decoder.initialize()
    if framework == "pytorch":
        encoder.eval()
        decoder.eval()
        X = X.long()
    state = decoder.init_state(encoder(X), lens)
    logits, _ = decoder(X, state)
    weights = to_numpy(decoder.attention_weights)
    # the same steps, each with the layer's own forward (W_k applied at every step)
    enc_outputs, hidden, _ = state
    embs, outs, plain_weights = decoder.embedding(X), [], []
    for t in range(5):
        query = hidden[-1][:, None, :]
        context = decoder.attention(query, enc_outputs, enc_outputs, lens)
        plain_weights.append(to_numpy(decoder.attention.attention_weights))
        x = concat_last(framework, context, embs[:, t : t + 1])
        if framework == "mxnet":  # Gluon's GRU: its state is a list of one array
            out, [hidden] = decoder.rnn(x, [hidden])
        else:
            out, hidden = decoder.rnn(x, hidden)
        outs.append(to_numpy(decoder.dense(out)))
    np.testing.assert_allclose(to_numpy(logits), np.concatenate(outs, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights, np.concatenate(plain_weights, axis=1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hybridized", [False, True], ids=["eager", "in-a-graph"])
@pytest.mark.parametrize(
    "valid_lens", [None, [2, 6, 4], [0, 9, 1]], ids=["none", "lengths", "zero-and-long"]
)
def test_mxnet_additive_step_equals_forward(valid_lens, hybridized):
    """MXNet's one implementation of an attention step against fixed keys, prepare_keys then
    AdditiveStep (fix_keys' attend and the Bahdanau decoder's graph both run it): the
    context, the weights and the gradients of AdditiveAttention's forward, eagerly and traced
    into a hybridized block's graph, as AttentionGRUSteps does."""
    from mxnet import autograd
    from mxnet import np as mnp
    from mxnet.gluon import nn

    from d2lcore import mxnet as d2l
    from d2lcore.mxnet.attention import AdditiveStep, prepare_keys

    class Steps(nn.HybridBlock):  # a parent that runs the step in its graph
        def __init__(self, attention):
            super().__init__()
            self.attend = AdditiveStep(attention)

        def hybrid_forward(self, F, query, keys, values, lens, ones):
            return self.attend(query, keys, values, lens, ones)

    layer = d2l.AdditiveAttention(num_hiddens=8, dropout=0)
    layer.initialize()
    keys, values = mnp.array(KEYS), mnp.array(VALUES)
    lens = None if valid_lens is None else mnp.array(valid_lens, dtype="int32")
    layer(mnp.array(QUERIES[0]), keys, values, lens)  # creates the weights
    step = Steps(layer) if hybridized else AdditiveStep(layer)
    if hybridized:
        step.hybridize()

    def forward(query):
        return layer(query, keys, values, lens), layer.attention_weights

    def attend(query):  # W_k's gradient flows through prepare_keys
        projected, lengths, ones = prepare_keys(layer, keys, lens)
        return step(query, projected, values, lengths, ones)

    def run(call, query):  # (context, weights, the weights' gradients for context.sum())
        with autograd.record():
            context, weights = call(query)
        context.backward()
        grads = {n: p.grad().asnumpy().copy() for n, p in layer.collect_params().items()}
        return context.asnumpy(), weights.asnumpy(), grads

    for queries in QUERIES:
        expected, got = run(forward, mnp.array(queries)), run(attend, mnp.array(queries))
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-6)
        for name, grad in expected[2].items():
            np.testing.assert_allclose(got[2][name], grad, rtol=1e-4, atol=1e-6, err_msg=name)
    assert got[1].shape == (3, 1, 6)
    if valid_lens is not None:  # the masked keys get no weight; a length of 0, none at all
        masked = np.arange(6)[None, :] >= np.array(valid_lens)[:, None]
        assert (got[1][:, 0][masked] == 0).all()
