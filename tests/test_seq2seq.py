"""The encoder–decoder of the Sequence-to-Sequence Toolkit and Bahdanau Attention pages: shapes, the masked loss,
the same function in every framework, training and greedy translation."""

import contextlib
import importlib
import io
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.convert import to_numpy
from tests.conftest import make_tensor

ROOT = Path(__file__).resolve().parents[1]
INDEX_DTYPE = {"mxnet": np.int32, "pytorch": np.int64, "tensorflow": np.int32}


def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def indices(framework, array):
    return make_tensor(framework, np.asarray(array).astype(INDEX_DTYPE[framework]))


def new_net(
    framework,
    src_vocab=12,
    tgt_vocab=11,
    dropout=0.0,
    embed=8,
    hiddens=16,
    layers=2,
    attention=True,
):
    d2l = module(framework)
    decoder = d2l.Seq2SeqAttentionDecoder if attention else d2l.Seq2SeqDecoder
    net = d2l.EncoderDecoder(
        d2l.Seq2SeqEncoder(src_vocab, embed, hiddens, layers, dropout),
        decoder(tgt_vocab, embed, hiddens, layers, dropout),
    )
    if framework == "mxnet":
        net.initialize()
    return net


def evaluate(framework, net, *args):
    """net(*args) in evaluation mode (dropout off)."""
    if framework == "pytorch":
        import torch

        net.eval()
        with torch.no_grad():
            return net(*args)
    if framework == "tensorflow":
        return net(*args, training=False)
    return net(*args)  # MXNet: outside autograd.record()


def test_shapes_of_the_syllabus_example(d2l, framework):
    """vocab 10, embed 8, hidden 16, 2 layers, X zeros (4, 7): the same layout everywhere."""
    encoder = d2l.Seq2SeqEncoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    decoder = d2l.Seq2SeqAttentionDecoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    if framework == "mxnet":
        encoder.initialize()
        decoder.initialize()
    X = indices(framework, np.zeros((4, 7)))
    state = decoder.init_state(evaluate(framework, encoder, X), None)
    assert decoder.attention_weights is None  # before the first call, as every attention layer
    output, state = evaluate(framework, decoder, X, state)
    assert tuple(output.shape) == (4, 7, 10)
    assert len(state) == 3
    assert tuple(state[0].shape) == (4, 7, 16)  # encoder outputs, batch first
    assert tuple(state[1].shape) == (2, 4, 16)  # hidden: (num_layers, batch, num_hiddens)
    weights = to_numpy(decoder.attention_weights)
    assert weights.shape == (4, 7, 7)  # (batch, decoder steps, source steps)
    np.testing.assert_allclose(weights.sum(axis=-1), 1, rtol=1e-6)


def test_plain_decoder_shapes_and_steps(d2l, framework):
    """The decoder without attention: its state is (context, hidden), the context is the encoder's last layer's
    final state and stays fixed; decoding step by step (as predict_seq2seq does) gives the logits of decoding all
    steps at once (as training does)."""
    net = new_net(framework, src_vocab=10, tgt_vocab=9, attention=False)
    rng = np.random.default_rng(3)
    X, dec_X = (
        indices(framework, rng.integers(0, 10, (4, 7))),
        indices(framework, rng.integers(0, 9, (4, 5))),
    )
    enc_outputs = evaluate(framework, net.encoder, X)
    context, hidden = net.decoder.init_state(enc_outputs, None)
    np.testing.assert_array_equal(to_numpy(context), to_numpy(enc_outputs[1])[-1])
    np.testing.assert_array_equal(to_numpy(context), to_numpy(enc_outputs[0])[:, -1])
    logits, (context_after, hidden_after) = evaluate(
        framework, net.decoder, dec_X, (context, hidden)
    )
    assert tuple(logits.shape) == (4, 5, 9)
    assert tuple(hidden_after.shape) == (2, 4, 16)
    np.testing.assert_array_equal(to_numpy(context_after), to_numpy(context))
    state, steps = (context, hidden), []
    for t in range(5):
        step, state = evaluate(
            framework, net.decoder, indices(framework, to_numpy(dec_X)[:, t : t + 1]), state
        )
        steps.append(to_numpy(step))
    np.testing.assert_allclose(
        np.concatenate(steps, axis=1), to_numpy(logits), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(to_numpy(state[1]), to_numpy(hidden_after), rtol=1e-5, atol=1e-6)
    vocab = d2l.Vocab(["a", "b"] * 2, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    net = new_net(framework, len(vocab), len(vocab), attention=False)
    translation, attention = d2l.predict_seq2seq(net, "a b", vocab, vocab, 4, d2l.cpu())
    assert isinstance(translation, str) and len(translation.split()) <= 4 and attention == []


def test_masked_softmax_ce_loss_of_the_syllabus_demo(d2l, framework, tensor):
    loss = d2l.MaskedSoftmaxCELoss()
    pred = tensor(np.ones((3, 4, 10), dtype=np.float32))
    label = indices(framework, np.ones((3, 4)))
    valid_len = indices(framework, [4, 2, 0])
    out = to_numpy(loss(pred, label, valid_len))
    np.testing.assert_allclose(out, [4 * math.log(10), 2 * math.log(10), 0], rtol=1e-5)


def test_masked_softmax_ce_loss_matches_numpy(d2l, framework, tensor):
    rng = np.random.default_rng(1)
    pred = rng.normal(size=(2, 3, 5)).astype(np.float32)
    label = np.array([[4, 0, 2], [1, 1, 3]])
    log_p = pred - np.log(np.exp(pred).sum(-1, keepdims=True))
    ce = -np.take_along_axis(log_p, label[..., None], -1)[..., 0]  # (2, 3)
    expected = [ce[0, :1].sum(), ce[1].sum()]
    out = d2l.MaskedSoftmaxCELoss()(
        tensor(pred), indices(framework, label), indices(framework, [1, 3])
    )
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-5)


def test_sequence_mask(d2l, framework, tensor):
    X = tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    out = to_numpy(d2l.sequence_mask(X, indices(framework, [1, 2]), value=-1))
    expected = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected[0, 1:] = -1
    expected[1, 2:] = -1
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(to_numpy(X), np.arange(24).reshape(2, 3, 4))  # X unchanged
    out2 = to_numpy(
        d2l.sequence_mask(tensor(np.ones((2, 3), np.float32)), indices(framework, [0, 3]))
    )
    np.testing.assert_array_equal(out2, [[0, 0, 0], [1, 1, 1]])
    with pytest.raises(ValueError, match="valid_len must have shape"):
        d2l.sequence_mask(X, indices(framework, [1, 2, 3]))


def test_the_same_function_in_every_framework():
    """Same weights (exported from PyTorch), same inputs: the same logits, final state and
    attention weights in every framework, in evaluation mode (dropout 0.5 must be off)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 12, (3, 6))
    dec_X = rng.integers(0, 11, (3, 5))
    valid_len = np.array([6, 3, 1])
    results, weights = {}, None
    for framework in ("pytorch", "mxnet", "tensorflow"):
        d2l = module(framework)
        net = new_net(framework, dropout=0.5)
        args = (indices(framework, X), indices(framework, dec_X), indices(framework, valid_len))
        evaluate(framework, net, *args)  # creates the weights whose sizes are inferred
        if weights is None:
            weights = d2l.export_weights(net)
            assert "decoder.rnn.weight_ih_l0" in weights
            assert weights["decoder.rnn.weight_ih_l0"].shape == (3 * 16, 8 + 16)
        d2l.load_weights(net, weights)
        exported = d2l.export_weights(net)
        assert all(np.array_equal(exported[name], weights[name]) for name in weights)
        Y, state = evaluate(framework, net, *args)
        attention = to_numpy(net.decoder.attention_weights)
        results[framework] = (to_numpy(Y), to_numpy(state[1]), attention)
        assert (attention[1, :, 3:] == 0).all() and (attention[2, :, 1:] == 0).all()
    for framework in ("mxnet", "tensorflow"):
        for got, expected in zip(results[framework], results["pytorch"]):
            np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-5)


# A tiny translation task: copy a sequence of words and reverse it
def toy_data(d2l, num_examples=32, num_steps=6, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(8)]
    vocab = d2l.Vocab(words * 2, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    lengths = rng.integers(1, num_steps, num_examples)
    source = [list(rng.choice(words, n)) for n in lengths]
    target = [line[::-1] for line in source]
    src, src_len = d2l.build_array_nmt(source, vocab, num_steps)
    tgt, tgt_len = d2l.build_array_nmt(target, vocab, num_steps)
    return d2l.load_array((src, src_len, tgt, tgt_len), batch_size=8), vocab


def train(framework, num_epochs, lr=0.02, dropout=0.0, seed=0):
    d2l = module(framework)
    d2l.set_seed(seed)
    data_iter, vocab = toy_data(d2l)
    net = new_net(framework, len(vocab), len(vocab), dropout=dropout, embed=8, hiddens=16)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        losses = d2l.train_seq2seq(net, data_iter, lr, num_epochs, vocab, d2l.cpu())
    return net, vocab, losses, output.getvalue()


def test_the_plain_decoder_is_the_same_function_in_every_framework():
    """The encoder–decoder without attention, with PyTorch's weights loaded everywhere: the same logits and the
    same final state in every framework, in evaluation mode (dropout 0.5 must be off)."""
    rng = np.random.default_rng(1)
    X, dec_X, valid_len = (
        rng.integers(0, 12, (3, 6)),
        rng.integers(0, 11, (3, 5)),
        np.array([6, 3, 1]),
    )
    results, weights = {}, None
    for framework in ("pytorch", "mxnet", "tensorflow"):
        d2l = module(framework)
        net = new_net(framework, dropout=0.5, attention=False)
        args = (indices(framework, X), indices(framework, dec_X), indices(framework, valid_len))
        evaluate(framework, net, *args)  # creates the weights whose sizes are inferred
        if weights is None:
            weights = d2l.export_weights(net)
            assert weights["decoder.rnn.weight_ih_l0"].shape == (
                3 * 16,
                16 + 8,
            )  # [context, embedding]
            assert weights["decoder.dense.weight"].shape == (11, 16)
        d2l.load_weights(net, weights)
        assert sorted(d2l.export_weights(net)) == sorted(weights)
        Y, (context, hidden) = evaluate(framework, net, *args)
        results[framework] = (to_numpy(Y), to_numpy(context), to_numpy(hidden))
    for framework in ("mxnet", "tensorflow"):
        for got, expected in zip(results[framework], results["pytorch"]):
            np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-5)


def test_same_seed_same_run_in_one_process(framework):
    """Three runs with the same seed in one fresh process give the same losses bit for bit (in TensorFlow the
    first run used to differ: see set_seed), and set_seed makes the same layer names."""
    code = f"""
import contextlib, io
import numpy as np
from tests.test_seq2seq import module, train
d2l = module({framework!r})
runs = [train({framework!r}, num_epochs=4, dropout=0.2)[2] for _ in range(3)]
assert runs[0] == runs[1] == runs[2], runs
if {framework!r} == "tensorflow":
    import keras
    d2l.set_seed(0)
    first = [keras.layers.Dense(2).name for _ in range(12)]
    d2l.set_seed(0)
    assert [keras.layers.Dense(2).name for _ in range(12)] == first
print("same")
"""
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0 and "same" in result.stdout, result.stderr[-3000:]


def test_training_learns_and_is_reproducible(framework):
    net, vocab, losses, printed = train(framework, num_epochs=12, dropout=0.2)
    assert len(losses) == 12 and all(np.isfinite(losses))
    assert losses[-1] < 0.75 * losses[0], losses
    assert printed.startswith(f"loss per token {losses[-1]:.3f}, ")
    assert " tokens/s over 12 epochs (" in printed
    _, _, again, _ = train(framework, num_epochs=12, dropout=0.2)
    assert again == losses  # the same seed gives the same run, dropout included


def test_the_same_training_in_every_framework():
    """After the same seed: the same batches and the same initial weights (NumPy draws them,
    d2lcore.initialization), hence the same losses without dropout, up to float rounding."""
    runs = {framework: train(framework, num_epochs=3) for framework in FRAMEWORKS}
    for framework in ("mxnet", "tensorflow"):
        np.testing.assert_allclose(runs[framework][2], runs["pytorch"][2], rtol=2e-4)


def test_initialisation_rule():
    """lr = 0 leaves the initial weights: identical in every framework, zero biases, weight
    matrices within the Xavier-uniform bound sqrt(6 / (fan_in + fan_out))."""
    weights = {}
    for framework in FRAMEWORKS:
        net, *_ = train(framework, num_epochs=1, lr=0.0)
        weights[framework] = module(framework).export_weights(net)
    names = sorted(weights["pytorch"])
    for framework in ("mxnet", "tensorflow"):
        assert sorted(weights[framework]) == names
        for name in names:
            np.testing.assert_array_equal(weights[framework][name], weights["pytorch"][name])
    for name, w in weights["pytorch"].items():
        if "bias" in name:
            assert (w == 0).all(), name
        else:
            bound = math.sqrt(6 / sum(w.shape))
            assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound, name


def test_predict_on_an_untrained_model(d2l, framework):
    src_vocab = d2l.Vocab(
        "a b c d".split() * 2, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"]
    )
    net = new_net(framework, len(src_vocab), 11, dropout=0.3)
    # Record the valid length the encoder is given
    seen = []
    init_state = net.decoder.init_state
    net.decoder.init_state = lambda outputs, valid_lens: (
        seen.append(to_numpy(valid_lens).tolist()) or init_state(outputs, valid_lens)
    )
    tgt_vocab = d2l.Vocab(
        [f"t{i}" for i in range(7)] * 2, min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"]
    )
    translation, attention = d2l.predict_seq2seq(
        net, "A b.", src_vocab, tgt_vocab, 6, d2l.cpu(), save_attention_weights=True
    )
    assert isinstance(translation, str)
    tokens = translation.split()
    assert len(tokens) <= 6 and "<eos>" not in tokens and "<bos>" not in tokens
    assert len(attention) == min(len(tokens) + 1, 6)  # the <eos> step is included
    assert seen == [[4]]  # "a b ." + <eos>
    for row in attention:
        assert row.shape == (6,)
        np.testing.assert_allclose(row[:4].sum(), 1, rtol=1e-5)
        assert (row[:4] > 0).all() and (row[4:] == 0).all()
    # Deterministic in evaluation mode; [] when not saved
    again, no_attention = d2l.predict_seq2seq(net, "a b .", src_vocab, tgt_vocab, 6, d2l.cpu())
    assert again == translation and no_attention == []
    # A sentence longer than num_steps: the valid length counts the kept tokens
    d2l.predict_seq2seq(net, "a b c d a b c", src_vocab, tgt_vocab, 5, d2l.cpu())
    assert seen[-1] == [5]


def test_predict_rejects_bad_input(d2l, framework):
    vocab = d2l.Vocab(["a", "a"], min_freq=2, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    net = new_net(framework, len(vocab), len(vocab))
    with pytest.raises(
        ValueError,
        match="^predict_seq2seq: src_sentence must hold a sentence to translate.*; got an empty one",
    ):
        d2l.predict_seq2seq(net, "  ", vocab, vocab, 5, d2l.cpu())
    with pytest.raises(TypeError, match="num_steps must be an int"):
        d2l.predict_seq2seq(net, "a", vocab, vocab, 5.0, d2l.cpu())
    with pytest.raises(TypeError, match="src_sentence must be a str"):
        d2l.predict_seq2seq(net, ["a"], vocab, vocab, 5, d2l.cpu())


def test_encoder_rejects_a_wrong_rank(d2l, framework):
    encoder = d2l.Seq2SeqEncoder(10, 4, 8, 1)
    if framework == "mxnet":
        encoder.initialize()
    with pytest.raises(ValueError, match="X must have 2 dimension"):
        encoder(indices(framework, np.zeros((2, 3, 1))))


def test_gru_dropout_between_layers_in_training(d2l, framework, tensor):
    """Two calls in training mode differ (dropout is on), in evaluation mode they agree."""
    encoder = d2l.Seq2SeqEncoder(10, 8, 16, 2, dropout=0.5)
    if framework == "mxnet":
        encoder.initialize()
    X = indices(framework, np.arange(12).reshape(3, 4) % 10)
    if framework == "pytorch":
        encoder.train()
        first, second = encoder(X)[0], encoder(X)[0]
    elif framework == "mxnet":
        from mxnet import autograd

        with autograd.record():
            first, second = encoder(X)[0], encoder(X)[0]
    else:
        first, second = encoder(X, training=True)[0], encoder(X, training=True)[0]
    first, second = to_numpy(first), to_numpy(second)
    assert np.abs(first - second).max() > 0.1 * np.abs(first).max()
    a, b = evaluate(framework, encoder, X)[0], evaluate(framework, encoder, X)[0]
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_mxnet_decoder_gradients_at_once_and_step_by_step():
    """MXNet's decoder runs its steps as one traced graph per number of steps: the weights'
    gradients after one call on 10 steps equal those after 10 calls on one step each. (With
    hybridize(static_alloc=True), MXNet 1.9.1 got those of the decoder's GRU wrong, several
    times too large, whenever the graph called the GRU more than once.)"""
    from mxnet import autograd
    from mxnet import np as mnp

    d2l = module("mxnet")
    d2l.set_seed(0)
    rng = np.random.default_rng(0)
    net = new_net("mxnet", src_vocab=20, tgt_vocab=20, embed=32, hiddens=32)  # no dropout
    X = indices("mxnet", rng.integers(0, 20, (8, 10)))
    dec_X = indices("mxnet", rng.integers(0, 20, (8, 10)))
    labels = indices("mxnet", rng.integers(0, 20, (8, 10)))
    valid = indices("mxnet", rng.integers(1, 11, 8))
    evaluate("mxnet", net, X, dec_X, valid)  # creates the weights whose sizes are inferred
    loss_fn = d2l.MaskedSoftmaxCELoss()

    def gradients(step_by_step):
        with autograd.record():
            state = net.decoder.init_state(net.encoder(X, valid), valid)
            if step_by_step:
                outputs = []
                for t in range(10):
                    Y, state = net.decoder(dec_X[:, t : t + 1], state)
                    outputs.append(Y)
                Y = mnp.concatenate(outputs, axis=1)
            else:
                Y, state = net.decoder(dec_X, state)
            loss = loss_fn(Y, labels, valid).sum()
        loss.backward()
        return {name: p.grad().asnumpy().copy() for name, p in net.collect_params().items()}

    at_once, one_by_one = gradients(False), gradients(True)
    assert any(name.startswith("gru") for name in at_once)
    for name, expected in one_by_one.items():
        np.testing.assert_allclose(at_once[name], expected, rtol=1e-4, atol=1e-5, err_msg=name)
