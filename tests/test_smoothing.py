"""Label Smoothing and Weight Tying: LabelSmoothedCELoss against a NumPy version and against the frameworks' own
smoothed losses (PyTorch's CrossEntropyLoss and Keras's CategoricalCrossentropy, which spread the mass as it does),
its masking, and train_seq2seq with it; TiedTransformerDecoder's one matrix for two uses (the same object, one
gradient that is the sum of both uses, one update per step), its parameter count, and its outputs in every
framework from the same weights."""

import importlib

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.convert import to_numpy
from tests.conftest import make_tensor

INDEX_DTYPE = {"mxnet": np.int32, "pytorch": np.int64, "tensorflow": np.int32}
SIZES = (8, 16, 2, 2, 0.0)  # num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout


def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def indices(framework, array):
    return make_tensor(framework, np.asarray(array).astype(INDEX_DTYPE[framework]))


def numpy_smoothed(pred, label, valid_len, smoothing):
    """The NumPy version: the cross-entropy with q = (1 - e) one_hot(y) + e / V, summed over the valid tokens."""
    vocab = pred.shape[-1]
    pred = pred.astype(np.float64)
    log_p = pred - pred.max(-1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(-1, keepdims=True))
    q = np.full(pred.shape, smoothing / vocab)
    np.put_along_axis(q, label[..., None], 1 - smoothing + smoothing / vocab, -1)
    loss = -(q * log_p).sum(-1)  # (batch, steps)
    keep = np.arange(label.shape[1])[None, :] < np.asarray(valid_len)[:, None]
    return (loss * keep).sum(1)


def random_case(seed=0, batch=3, steps=5, vocab=7):
    rng = np.random.default_rng(seed)
    pred = (3 * rng.normal(size=(batch, steps, vocab))).astype(np.float32)
    label = rng.integers(0, vocab, (batch, steps))
    valid_len = np.array([steps, 2, 0])[:batch]
    return pred, label, valid_len


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.5, 0.9])
def test_label_smoothed_loss_matches_numpy(d2l, framework, tensor, smoothing):
    pred, label, valid_len = random_case()
    loss = d2l.LabelSmoothedCELoss(smoothing)
    out = to_numpy(loss(tensor(pred), indices(framework, label), indices(framework, valid_len)))
    assert out.shape == (3,)
    np.testing.assert_allclose(
        out, numpy_smoothed(pred, label, valid_len, smoothing), rtol=1e-5, atol=1e-5
    )
    assert out[2] == 0  # a sequence of length 0 contributes nothing


def test_no_smoothing_is_the_masked_loss(d2l, framework, tensor):
    pred, label, valid_len = random_case(seed=1)
    args = (tensor(pred), indices(framework, label), indices(framework, valid_len))
    np.testing.assert_allclose(
        to_numpy(d2l.LabelSmoothedCELoss(0)(*args)),
        to_numpy(d2l.MaskedSoftmaxCELoss()(*args)),
        rtol=1e-6,
        atol=1e-6,
    )


def test_padding_positions_change_nothing(d2l, framework, tensor):
    """Logits and labels at the padding positions (t >= valid_len) do not enter the loss, even NaN logits."""
    pred, label, valid_len = random_case(seed=2)
    loss = d2l.LabelSmoothedCELoss(0.1)
    before = to_numpy(loss(tensor(pred), indices(framework, label), indices(framework, valid_len)))
    pred2, label2 = pred.copy(), label.copy()
    for b, n in enumerate(valid_len):
        pred2[b, n:] = np.nan
        label2[b, n:] = 0
    after = to_numpy(loss(tensor(pred2), indices(framework, label2), indices(framework, valid_len)))
    np.testing.assert_allclose(after, before, rtol=1e-6)


def test_same_as_torch_cross_entropy_with_label_smoothing():
    """PyTorch's own loss spreads the mass as LabelSmoothedCELoss does: e / V on every class."""
    import torch

    d2l = module("pytorch")
    pred, label, valid_len = random_case(seed=3, vocab=11)
    own = torch.nn.CrossEntropyLoss(label_smoothing=0.1, reduction="none")
    per_token = own(torch.tensor(pred).reshape(-1, 11), torch.tensor(label).reshape(-1)).reshape(
        3, 5
    )
    keep = torch.arange(5)[None, :] < torch.tensor(valid_len)[:, None]
    expected = (per_token * keep).sum(1)
    out = d2l.LabelSmoothedCELoss(0.1)(
        torch.tensor(pred), torch.tensor(label), torch.tensor(valid_len)
    )
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)


def test_same_as_keras_categorical_crossentropy_with_label_smoothing():
    """Keras's own loss, given one-hot labels, spreads the mass as LabelSmoothedCELoss does: e / V on every class."""
    import keras
    import tensorflow as tf

    d2l = module("tensorflow")
    pred, label, valid_len = random_case(seed=4, vocab=11)
    own = keras.losses.CategoricalCrossentropy(
        from_logits=True, label_smoothing=0.1, reduction=None
    )
    per_token = own(tf.one_hot(label, 11), tf.constant(pred)).numpy()  # (3, 5)
    keep = np.arange(5)[None, :] < valid_len[:, None]
    out = d2l.LabelSmoothedCELoss(0.1)(
        tf.constant(pred), tf.constant(label), tf.constant(valid_len)
    )
    np.testing.assert_allclose(out.numpy(), (per_token * keep).sum(1), rtol=1e-5, atol=1e-5)


def test_smoothing_gives_a_floor_and_a_target_below_one():
    """With e > 0 the loss is least when p = q, not at a one-hot p: a logit pushed ever higher costs more."""
    d2l = module("pytorch")
    import torch

    vocab, e = 5, 0.1
    loss = d2l.LabelSmoothedCELoss(e)
    label, lens = torch.tensor([[0]]), torch.tensor([1])
    q = np.full(vocab, e / vocab)
    q[0] += 1 - e
    at_q = loss(torch.tensor(np.log(q), dtype=torch.float32).reshape(1, 1, -1), label, lens)
    sharp = loss(torch.tensor([[[30.0, 0, 0, 0, 0]]]), label, lens)
    entropy = -(q * np.log(q)).sum()
    np.testing.assert_allclose(float(at_q), entropy, rtol=1e-5)  # the floor: H(q)
    assert float(sharp) > float(at_q) + 1


# --- weight tying ---------------------------------------------------------------------------------------------


def build(framework, tied, vocab=10):
    """(encoder, decoder, logits of one call) with the weights built."""
    d2l = module(framework)
    d2l.set_seed(0)
    Decoder = d2l.TiedTransformerDecoder if tied else d2l.TransformerDecoder
    encoder, decoder = d2l.TransformerEncoder(12, *SIZES), Decoder(vocab, *SIZES)
    if framework == "mxnet":
        encoder.initialize()
        decoder.initialize()
    src, tgt = indices(framework, [[1, 2, 3, 0]]), indices(framework, [[4, 5, 6]])
    logits, _ = decoder(tgt, decoder.init_state(encoder(src, None), None))
    return encoder, decoder, logits


def shared_and_count(framework, decoder):
    """(is the output layer's weight the embedding's very object?, number of distinct parameters)."""
    if framework == "pytorch":
        return decoder.dense.weight is decoder.embedding.weight, sum(
            p.numel() for p in decoder.parameters()
        )
    if framework == "mxnet":
        params = {id(p): p for p in decoder.collect_params().values()}
        return (
            decoder.dense.weight is decoder.embedding.weight,
            sum(p.data().size for p in params.values()),
        )
    variables = {id(v): v for v in decoder.trainable_variables}
    output = getattr(decoder.dense, "embedding", decoder.dense)  # Dense: no embedding of its own
    return (
        getattr(output, "embeddings", None) is decoder.embedding.embeddings,
        sum(int(np.prod(v.shape)) for v in variables.values()),
    )


def test_tied_weights_are_one_parameter_and_count_once(framework):
    _, tied, _ = build(framework, True)
    _, plain, _ = build(framework, False)
    same, tied_count = shared_and_count(framework, tied)
    assert same
    assert shared_and_count(framework, plain)[0] is False
    assert shared_and_count(framework, plain)[1] - tied_count == 10 * 8  # vocab_size * num_hiddens
    if framework == "tensorflow":
        assert len(tied.trainable_variables) == len({id(v) for v in tied.trainable_variables})
        assert tied.count_params() == tied_count


def test_tied_weights_export_and_load_as_one_matrix(framework):
    """export_weights names the one matrix twice (embedding.weight, dense.weight), as PyTorch's state_dict does,
    and a matrix loaded into the embedding is the output layer's too."""
    d2l = module(framework)
    encoder, decoder, logits = build(framework, True)
    weights = {k: v.copy() for k, v in d2l.export_weights(decoder).items()}  # PyTorch's are views
    np.testing.assert_array_equal(weights["dense.weight"], weights["embedding.weight"])
    # Changing the embedding's matrix changes the output layer's: one matrix
    new = dict(weights, **{"embedding.weight": weights["embedding.weight"] * 2})
    new["dense.weight"] = new["embedding.weight"]
    d2l.load_weights(decoder, new)
    np.testing.assert_array_equal(
        d2l.export_weights(decoder)["dense.weight"], weights["embedding.weight"] * 2
    )


def _grads_and_step(framework, tied, weights, lr=0.5):
    """Load ``weights`` into a fresh decoder (tied or not), run one loss, and return (gradients by canonical
    name, weights after one SGD step by canonical name)."""
    d2l = module(framework)
    encoder, decoder, _ = build(framework, tied)
    d2l.load_weights(decoder, weights)
    src, tgt = np.array([[1, 2, 3, 0]]), np.array([[4, 5, 6]])
    label = np.array([[5, 6, 2]])
    if framework == "pytorch":
        import torch

        enc_out = encoder(torch.tensor(src), None).detach()
        opt = torch.optim.SGD(decoder.parameters(), lr=lr)
        logits, _ = decoder(torch.tensor(tgt), decoder.init_state(enc_out, None))
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, 10), torch.tensor(label).reshape(-1)
        )
        loss.backward()
        grads = {
            "embedding": decoder.embedding.weight.grad.numpy().copy(),
            "dense": decoder.dense.weight.grad.numpy().copy(),
        }
        opt.step()
    elif framework == "mxnet":
        from mxnet import autograd, gluon, npx
        from mxnet import np as mnp

        enc_out = encoder(mnp.array(src, dtype="int32"), None)
        trainer = gluon.Trainer(decoder.collect_params(), "sgd", {"learning_rate": lr})
        with autograd.record():
            logits, _ = decoder(mnp.array(tgt, dtype="int32"), decoder.init_state(enc_out, None))
            loss = -npx.pick(
                npx.log_softmax(logits, axis=-1), mnp.array(label, dtype="int32"), axis=-1
            ).mean()
        loss.backward()
        grads = {
            "embedding": decoder.embedding.weight.grad().asnumpy().copy(),
            "dense": decoder.dense.weight.grad().asnumpy().copy(),
        }
        trainer.step(1)
    else:
        import keras
        import tensorflow as tf

        enc_out = encoder(tf.constant(src), None)
        opt = keras.optimizers.SGD(learning_rate=lr)
        variables = decoder.trainable_variables
        with tf.GradientTape() as tape:
            logits, _ = decoder(tf.constant(tgt), decoder.init_state(enc_out, None))
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=tf.constant(label), logits=logits
                )
            )
        grad_list = tape.gradient(loss, variables)
        by_id = {id(v): g for v, g in zip(variables, grad_list)}
        emb = decoder.embedding.embeddings
        out = decoder.dense.embedding.embeddings if tied else decoder.dense.kernel
        grads = {"embedding": tf.convert_to_tensor(by_id[id(emb)]).numpy()}
        grads["dense"] = tf.convert_to_tensor(by_id[id(out)]).numpy()
        if not tied:
            grads["dense"] = grads["dense"].T  # Keras's kernel is (in, out)
        opt.apply_gradients(zip(grad_list, variables))
    return grads, d2l.export_weights(decoder)


def test_tied_gradient_is_the_sum_of_both_uses_and_one_step_updates_it_once(framework):
    """From the same weights (embedding = output matrix), the tied matrix's gradient is the untied model's
    embedding gradient plus its output-layer gradient, and one SGD step moves it by lr times that sum, once."""
    d2l = module(framework)
    _, tied, _ = build(framework, True)
    weights = {k: v.copy() for k, v in d2l.export_weights(tied).items()}  # PyTorch's are views
    tied_grads, tied_after = _grads_and_step(framework, True, weights)
    plain_grads, _ = _grads_and_step(framework, False, weights)
    total = plain_grads["embedding"] + plain_grads["dense"]
    np.testing.assert_allclose(tied_grads["embedding"], total, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(
        tied_grads["dense"], tied_grads["embedding"]
    )  # one gradient, seen twice
    assert np.abs(plain_grads["embedding"]).max() > 0 and np.abs(plain_grads["dense"]).max() > 0
    np.testing.assert_allclose(
        tied_after["embedding.weight"],
        weights["embedding.weight"] - 0.5 * total,
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_array_equal(tied_after["dense.weight"], tied_after["embedding.weight"])


def test_tied_decoder_gives_the_same_outputs_in_every_framework():
    """The same weights (exported from PyTorch, under the same canonical names) give the same logits."""
    _, torch_decoder, _ = build("pytorch", True)
    weights = module("pytorch").export_weights(torch_decoder)
    outputs = {}
    for framework in FRAMEWORKS:
        d2l = module(framework)
        encoder, decoder, _ = build(framework, True)
        d2l.load_weights(decoder, weights)
        enc_weights = module("pytorch").export_weights(build("pytorch", True)[0])
        d2l.load_weights(encoder, enc_weights)
        src, tgt = indices(framework, [[1, 2, 3, 0]]), indices(framework, [[4, 5, 6]])
        logits, _ = decoder(tgt, decoder.init_state(encoder(src, None), None))
        outputs[framework] = to_numpy(logits)
    for framework in FRAMEWORKS:
        np.testing.assert_allclose(outputs[framework], outputs["pytorch"], rtol=1e-4, atol=1e-5)


def test_train_seq2seq_uses_the_loss_it_is_given(framework):
    """train_seq2seq with loss_fn: the smoothed loss per token is reported, above the plain one of the same run
    (the same seed), and a tied model trains."""
    import contextlib
    import io

    d2l = module(framework)
    X = np.array([[4, 5, 2, 0]] * 4, dtype=np.int32)
    lens = np.array([3, 3, 3, 3], dtype=np.int32)
    vocab = d2l.Vocab(["a b c"], reserved_tokens=["<pad>", "<bos>", "<eos>"])
    losses = {}
    for name, loss_fn, Decoder in (
        ("plain", None, d2l.TransformerDecoder),
        ("smoothed", d2l.LabelSmoothedCELoss(0.5), d2l.TransformerDecoder),
        ("tied", None, d2l.TiedTransformerDecoder),
    ):
        d2l.set_seed(0)
        net = d2l.EncoderDecoder(d2l.TransformerEncoder(7, *SIZES), Decoder(7, *SIZES))
        data = d2l.load_array((X, lens, X, lens), 2)
        with contextlib.redirect_stdout(io.StringIO()):
            losses[name] = d2l.train_seq2seq(net, data, 0.01, 3, vocab, d2l.cpu(), loss_fn=loss_fn)
    assert losses["smoothed"][0] > losses["plain"][0]
    assert losses["tied"][-1] < losses["tied"][0]


def test_the_stored_study_is_its_own_summary_and_record():
    """data/measurements/transformer_smoothing.json: its summary is the one its runs give, every run was trained with
    the settings it names, and d2l.show_smoothing_study shows a record of the means per config."""
    from d2lcore import measurements, records

    data = measurements.read_measurement("transformer_smoothing")
    assert measurements.summarise_smoothing(data) == data["summary"]
    assert all(r["epochs"] == data["epochs"] for r in data["runs"])
    for framework in {r["framework"] for r in data["runs"]}:
        with records.collect() as shown:
            record = module(framework).show_smoothing_study(framework)
        assert [r.name for r in shown] == ["smoothing_study"]
        fields = measurements.smoothing_fields(data, framework)
        assert dict(record) == fields
        baseline = [
            r for r in data["runs"] if r["framework"] == framework and r["config"] == "baseline"
        ]
        assert fields["baseline_bleu"] == pytest.approx(
            np.mean([r["held_out"]["bleu"] for r in baseline]), rel=1e-12
        )


def test_what_the_page_says_of_the_stored_study():
    """The claims of "Four Versions, Three Seeds", in every framework: three seeds per version; every seed trained with
    label smoothing is less confident (a lower mean top probability, a higher mean entropy on the held-out pairs)
    than every seed trained without it; the mean held-out BLEU of each changed version lies above the baseline's."""
    from d2lcore import measurements

    data = measurements.read_measurement("transformer_smoothing")
    assert data["configs"] == list(measurements.SMOOTHING_CONFIGS)
    for framework in ("mxnet", "pytorch", "tensorflow"):
        runs = [r for r in data["runs"] if r["framework"] == framework]
        conf = {
            smoothed: [
                r["confidence"]["held_out"]
                for r in runs
                if (r["config"] in ("smoothing", "both")) == smoothed
            ]
            for smoothed in (True, False)
        }
        assert len(conf[True]) == len(conf[False]) == 6, framework
        assert max(c["max_prob"] for c in conf[True]) < min(c["max_prob"] for c in conf[False]), (
            framework
        )
        assert min(c["entropy"] for c in conf[True]) > max(c["entropy"] for c in conf[False]), (
            framework
        )
        summary = data["summary"][framework]
        for config in ("smoothing", "tied", "both"):
            assert summary[config]["bleu"]["mean"] > summary["baseline"]["bleu"]["mean"], (
                framework,
                config,
            )
