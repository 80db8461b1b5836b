"""The Bahdanau decoder's steps (Bahdanau Attention): its outputs and attention weights are those of the loop of the
equations, written out step by step, in every framework."""

import numpy as np

from d2lcore.convert import to_numpy

RNG = np.random.default_rng(5)


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
    """The Bahdanau decoder gives the outputs and weights of the same loop written out here, one call of its
    attention layer and one GRU step per target step."""
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


def test_mxnet_hybridized_decoder_has_the_eager_gradients():
    """MXNet's train_seq2seq hybridizes the model with static_alloc=True, and the Bahdanau
    decoder calls its hybridized GRU once per step: the gradients must be those of the model
    run eagerly (MXNet 1.9.1 got them wrong for a GRU called several times inside one graph)."""
    from mxnet import autograd
    from mxnet import np as mx_np

    import d2lcore.mxnet as d2l

    rng = np.random.default_rng(1)
    X = mx_np.array(rng.integers(0, 20, (4, 6)), dtype="int32")
    Y = mx_np.array(rng.integers(0, 20, (4, 5)), dtype="int32")
    lens = mx_np.array([6, 3, 2, 5], dtype="int32")

    def gradients(hybridized):
        d2l.set_seed(0)
        sizes = dict(vocab_size=20, embed_size=8, num_hiddens=16, num_layers=2)
        net = d2l.EncoderDecoder(d2l.Seq2SeqEncoder(**sizes), d2l.Seq2SeqAttentionDecoder(**sizes))
        net.initialize()
        if hybridized:
            net.hybridize(static_alloc=True)
        with autograd.record():
            out, _ = net(X, Y, lens)
            weights = mx_np.arange(out.size).reshape(out.shape) / out.size
            (out * weights).sum().backward()
        return [p.grad().asnumpy() for p in net.collect_params().values()]

    for eager, hybrid in zip(gradients(False), gradients(True), strict=True):
        np.testing.assert_allclose(hybrid, eager, rtol=1e-5, atol=1e-7)
