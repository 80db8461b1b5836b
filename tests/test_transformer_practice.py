"""Training a Transformer Well (transformer-practice.md): the warmup schedule of Vaswani et al. (2017, eq. 3)
through each framework's own schedule machinery against a NumPy version; train_seq2seq with a schedule. Where the
Layer Norm Goes (transformer-prenorm.md): pre-norm and post-norm blocks with the same weights against NumPy; the
pre-norm encoder and decoder the same in every framework, each ending with its final layer norm; the committed
study over seeds, which that page quotes."""

import numpy as np
import pytest

from tests.test_multihead import numpy_mha
from tests.test_transformer import (
    ENC,
    ENC_LENS,
    FFN,
    HEADS,
    LAYERS,
    MAX_LEN,
    SRC,
    SRC_VOCAB,
    TGT,
    TGT_VOCAB,
    X_IN,
    X_NEXT,
    H,
    evaluate,
    flat,
    floats,
    indices,
    new,
    numpy_layer_norm,
    randomise,
)


def numpy_rate(t, num_hiddens, warmup_steps):
    """Eq. 3 of Vaswani et al. (2017) for updates t = 1, 2, ..., in float64."""
    t = np.asarray(t, np.float64)
    return num_hiddens**-0.5 * np.minimum(t**-0.5, t * warmup_steps**-1.5)


# --- the schedule -----------------------------------------------------------------------------------------------


def sgd_steps(framework, schedule, lr, num_steps):
    """The learning rate of each of ``num_steps`` updates of SGD with ``schedule`` given to the framework's own
    machinery (LambdaLR, Gluon's Trainer, a Keras optimizer), read from what the update did: one weight, 0 at
    first, with a gradient of -1 at every step, grows by the step's rate."""
    rates, before = [], 0.0
    if framework == "pytorch":
        import torch

        w = torch.zeros(1, requires_grad=True)
        optimizer = torch.optim.SGD([w], lr=lr)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
        for _ in range(num_steps):
            optimizer.zero_grad()
            (-w.sum()).backward()
            optimizer.step()
            scheduler.step()
            rates.append(float(w.detach()[0]) - before)
            before = float(w.detach()[0])
    elif framework == "mxnet":
        from mxnet import autograd, gluon

        w = gluon.Parameter("w", shape=(1,), init="zeros")
        w.initialize()
        trainer = gluon.Trainer([w], "sgd", {"learning_rate": lr, "lr_scheduler": schedule})
        for _ in range(num_steps):
            with autograd.record():
                loss = -w.data().sum()
            loss.backward()
            trainer.step(1)
            rates.append(float(w.data()[0]) - before)
            before = float(w.data()[0])
    else:
        import keras
        import tensorflow as tf

        w = tf.Variable([0.0])
        optimizer = keras.optimizers.SGD(learning_rate=schedule)
        for _ in range(num_steps):
            optimizer.apply_gradients([(tf.constant([-1.0]), w)])
            rates.append(float(w.numpy()[0]) - before)
            before = float(w.numpy()[0])
    return np.array(rates)


@pytest.mark.parametrize("num_hiddens, warmup_steps", [(32, 4), (512, 10), (8, 1)])
def test_schedule_equals_numpy_update_by_update(d2l, framework, num_hiddens, warmup_steps):
    """The rate of update t is eq. 3 at t = 1, 2, ...: the first update is made at step 1 (not at rate 0),
    in the framework's machinery."""
    lr = 1.0 if framework == "tensorflow" else 2.0  # Keras takes the schedule as the rate itself
    rates = sgd_steps(
        framework, d2l.WarmupSchedule(num_hiddens, warmup_steps), lr, 3 * warmup_steps + 5
    )
    expected = lr * numpy_rate(np.arange(1, len(rates) + 1), num_hiddens, warmup_steps)
    assert rates[0] > 0
    np.testing.assert_allclose(rates, expected, rtol=1e-5)


def test_schedule_peaks_at_the_warmup_step(d2l, framework):
    warmup = 7
    rates = sgd_steps(framework, d2l.WarmupSchedule(16, warmup), 1.0, 30)
    assert int(np.argmax(rates)) + 1 == warmup
    np.testing.assert_allclose(rates.max(), (16 * warmup) ** -0.5, rtol=1e-5)
    assert np.all(np.diff(rates[:warmup]) > 0) and np.all(np.diff(rates[warmup - 1 :]) < 0)


def test_the_three_schedules_agree():
    """Each framework's schedule, called as its machinery calls it (PyTorch and Keras from 0, Gluon from 1)."""
    from d2lcore import mxnet as mx_d2l
    from d2lcore import tensorflow as tf_d2l
    from d2lcore import torch as torch_d2l

    steps = np.arange(1, 101)
    torch_rates = [torch_d2l.WarmupSchedule(32, 40)(t - 1) for t in steps]
    mxnet_rates = [mx_d2l.WarmupSchedule(32, 40)(int(t)) for t in steps]
    keras_rates = tf_d2l.WarmupSchedule(32, 40)(steps - 1).numpy()
    for rates in (torch_rates, mxnet_rates, keras_rates):
        np.testing.assert_allclose(rates, numpy_rate(steps, 32, 40), rtol=1e-6)


@pytest.mark.parametrize(
    "argument, value", [("warmup_steps", 0), ("warmup_steps", None), ("num_hiddens", 0)]
)
def test_schedule_bad_sizes(d2l, argument, value):
    sizes = {"num_hiddens": 32, "warmup_steps": 4, argument: value}
    with pytest.raises((ValueError, TypeError), match=rf"WarmupSchedule: {argument} must"):
        d2l.WarmupSchedule(**sizes)


# --- post-norm and pre-norm blocks against NumPy --------------------------------------------------------------------


def numpy_ffn(w, prefix, X):
    hidden = np.maximum(X @ w[f"{prefix}dense1.weight"].T + w[f"{prefix}dense1.bias"], 0)
    return hidden @ w[f"{prefix}dense2.weight"].T + w[f"{prefix}dense2.bias"]


def sub(weights, prefix):
    return {name[len(prefix) :]: w for name, w in weights.items() if name.startswith(prefix)}


def norm(w, name, Z):
    return numpy_layer_norm(Z, w[f"{name}.weight"], w[f"{name}.bias"])


def numpy_encoder_block(w, X, lens, pre_norm):
    """Post-norm: LN(X + A(X)), then LN(Y + F(Y)); pre-norm: X + A(LN(X)), then X + F(LN(X))."""
    X = X.astype(np.float64)
    if pre_norm:
        Y = norm(w, "ln1", X)
        X = X + numpy_mha(sub(w, "attention."), Y, Y, Y, lens, HEADS)[0]
        return X + numpy_ffn(w, "ffn.", norm(w, "ln2", X))
    Y = norm(w, "addnorm1.ln", X + numpy_mha(sub(w, "attention."), X, X, X, lens, HEADS)[0])
    return norm(w, "addnorm2.ln", Y + numpy_ffn(w, "ffn.", Y))


def numpy_decoder_block(w, X, cache, enc, enc_lens, pre_norm):
    """The block on X (batch, steps, H) at positions past, ..., past + steps - 1 after the cache."""
    X = X.astype(np.float64)
    key_values = X if cache is None else np.concatenate((cache, X), axis=1)
    past, steps = key_values.shape[1] - X.shape[1], X.shape[1]
    causal = np.broadcast_to(np.arange(past + 1, past + steps + 1), (X.shape[0], steps))
    self_w, cross_w = sub(w, "self_attention."), sub(w, "cross_attention.")
    if pre_norm:
        Y, KV = norm(w, "ln1", X), norm(w, "ln1", key_values)
        X = X + numpy_mha(self_w, Y, KV, KV, causal, HEADS)[0]
        Y = norm(w, "ln2", X)
        X = X + numpy_mha(cross_w, Y, enc, enc, enc_lens, HEADS)[0]
        return X + numpy_ffn(w, "ffn.", norm(w, "ln3", X))
    Y = norm(w, "addnorm1.ln", X + numpy_mha(self_w, X, key_values, key_values, causal, HEADS)[0])
    Z = norm(w, "addnorm2.ln", Y + numpy_mha(cross_w, Y, enc, enc, enc_lens, HEADS)[0])
    return norm(w, "addnorm3.ln", Z + numpy_ffn(w, "ffn.", Z))


BLOCKS = {
    False: ("TransformerEncoderBlock", "TransformerDecoderBlock"),
    True: ("PreNormEncoderBlock", "PreNormDecoderBlock"),
}


@pytest.mark.parametrize("pre_norm", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("lens", [None, np.array([5, 2])], ids=["no-mask", "lengths"])
def test_encoder_blocks_match_numpy(d2l, framework, pre_norm, lens):
    block = new(framework, BLOCKS[pre_norm][0], H, FFN, HEADS, 0.5)  # dropout: off in evaluation
    args = (floats(framework, X_IN), indices(framework, lens))
    evaluate(framework, block, *args)
    weights = randomise(d2l, block)
    got = flat(evaluate(framework, block, *args))[0]
    np.testing.assert_allclose(got, numpy_encoder_block(weights, X_IN, lens, pre_norm), atol=2e-5)


@pytest.mark.parametrize("pre_norm", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_blocks_match_numpy_with_and_without_a_cache(d2l, framework, pre_norm):
    block = new(framework, BLOCKS[pre_norm][1], H, FFN, HEADS, 0.5)
    enc, enc_lens = floats(framework, ENC), indices(framework, ENC_LENS)
    evaluate(framework, block, floats(framework, X_IN), enc, enc_lens)
    weights = randomise(d2l, block)
    out, cache = flat(evaluate(framework, block, floats(framework, X_IN), enc, enc_lens))
    np.testing.assert_allclose(cache, X_IN)  # the cache holds the block's inputs
    expected = numpy_decoder_block(weights, X_IN, None, ENC, ENC_LENS, pre_norm)
    np.testing.assert_allclose(out, expected, atol=2e-5)
    args = (floats(framework, X_NEXT), enc, enc_lens, floats(framework, X_IN))
    out, _ = flat(evaluate(framework, block, *args))
    expected = numpy_decoder_block(weights, X_NEXT, X_IN, ENC, ENC_LENS, pre_norm)
    np.testing.assert_allclose(out, expected, atol=2e-5)


def test_pre_norm_differs_from_post_norm(d2l, framework):
    """The same sublayers, the norms elsewhere: another function (the NumPy versions compare each)."""
    post = numpy_encoder_block(
        {**{f"addnorm{i}.ln.weight": np.ones(H) for i in (1, 2)}, **_weights()}, X_IN, None, False
    )
    pre = numpy_encoder_block(
        {**{f"ln{i}.weight": np.ones(H) for i in (1, 2)}, **_weights()}, X_IN, None, True
    )
    assert np.abs(post - pre).max() > 0.1
    # post-norm ends normalised; pre-norm keeps the scale of its residual path
    np.testing.assert_allclose(post.std(-1), 1, atol=1e-3)
    assert np.abs(pre.std(-1) - 1).max() > 0.1


def _weights():
    rng = np.random.default_rng(3)
    w = {f"{n}.bias": np.zeros(H) for n in ("addnorm1.ln", "addnorm2.ln", "ln1", "ln2")}
    for name in ("W_q", "W_k", "W_v", "W_o"):
        w[f"attention.{name}.weight"] = rng.normal(scale=H**-0.5, size=(H, H))
    w["ffn.dense1.weight"], w["ffn.dense1.bias"] = (
        rng.normal(scale=H**-0.5, size=(FFN, H)),
        np.zeros(FFN),
    )
    w["ffn.dense2.weight"], w["ffn.dense2.bias"] = (
        rng.normal(scale=FFN**-0.5, size=(H, FFN)),
        np.zeros(H),
    )
    return w


# --- the pre-norm encoder and decoder: the same in every framework, a final layer norm ------------------------------


def pre_norm_encoder_case(framework):
    net = new(
        framework,
        "PreNormTransformerEncoder",
        SRC_VOCAB,
        H,
        FFN,
        HEADS,
        LAYERS,
        0.5,
        False,
        MAX_LEN,
    )

    def run():
        results = []
        for lens in (None, ENC_LENS):
            out = evaluate(framework, net, indices(framework, SRC), indices(framework, lens))
            results += flat(out, net.attention_weights)
        return results

    return net, run


def pre_norm_decoder_case(framework):
    net = new(
        framework,
        "PreNormTransformerDecoder",
        TGT_VOCAB,
        H,
        FFN,
        HEADS,
        LAYERS,
        0.5,
        False,
        MAX_LEN,
    )

    def run():
        results = []
        for lens in (None, ENC_LENS):
            state = net.init_state(floats(framework, ENC), indices(framework, lens))
            for chunk in (TGT[:, :4], TGT[:, 4:]):  # 4 tokens, then 2 more through the caches
                logits, state = evaluate(framework, net, indices(framework, chunk), state)
                results += flat(logits, state, net.attention_weights)
        return results

    return net, run


PRE_NORM_CASES = {
    "pre-norm-encoder": pre_norm_encoder_case,
    "pre-norm-decoder": pre_norm_decoder_case,
}


@pytest.mark.parametrize("kind", list(PRE_NORM_CASES))
def test_pre_norm_models_agree_across_frameworks(d2l, framework, kind):
    """Weights made in PyTorch, loaded in each framework: the same names, outputs, caches and attention
    weights."""
    from d2lcore import torch as torch_d2l

    torch_d2l.set_seed(0)
    reference, run_reference = PRE_NORM_CASES[kind]("pytorch")
    run_reference()
    weights = randomise(torch_d2l, reference)
    expected = run_reference()
    net, run = PRE_NORM_CASES[kind](framework)
    run()
    d2l.load_weights(net, weights)
    assert list(d2l.export_weights(net)) == list(weights)
    got = run()
    assert [g.shape for g in got] == [e.shape for e in expected]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-5, err_msg=f"{kind}: result {i}")


@pytest.mark.parametrize("kind", list(PRE_NORM_CASES))
def test_the_last_operation_is_the_final_layer_norm(d2l, framework, kind):
    """With the final norm's scale 0 and its shift b, the encoder outputs b at every position, and the decoder's
    logits are dense(b): nothing after the final norm but (in the decoder) the dense layer."""
    net, run = PRE_NORM_CASES[kind](framework)
    run()
    weights = randomise(d2l, net)
    shift = np.linspace(-1, 1, H, dtype=np.float32)
    d2l.load_weights(net, {**weights, "ln.weight": np.zeros(H, np.float32), "ln.bias": shift})
    out = run()[0]  # the encoder's output, or the decoder's first logits
    if kind == "pre-norm-decoder":
        shift = shift @ weights["dense.weight"].T + weights["dense.bias"]
    np.testing.assert_allclose(out, np.broadcast_to(shift, out.shape), atol=1e-5)
    # and its output is normalised: with the randomised scale and shift undone, mean 0 and variance 1
    d2l.load_weights(net, weights)
    if kind == "pre-norm-encoder":
        out = (run()[0] - weights["ln.bias"]) / weights["ln.weight"]
        np.testing.assert_allclose(out.mean(-1), 0, atol=1e-4)
        np.testing.assert_allclose(out.var(-1), 1, atol=1e-3)


# --- train_seq2seq with a schedule ----------------------------------------------------------------------------------


def test_train_seq2seq_follows_its_schedule(d2l, framework):
    """A schedule of rate 0 leaves the model as initialised: the loss of every epoch is the same; the same run
    without it learns."""
    arrays, vocab = d2l.reversal_arrays(64, 9)

    def run(schedule):
        d2l.set_seed(0)
        net = d2l.EncoderDecoder(
            d2l.PreNormTransformerEncoder(len(vocab), 8, 16, 2, 1, 0.0),
            d2l.PreNormTransformerDecoder(len(vocab), 8, 16, 2, 1, 0.0),
        )
        return d2l.train_seq2seq(
            net, d2l.load_array(arrays, 32), 0.01, 3, vocab, d2l.cpu(), schedule=schedule
        )

    frozen = run(zero_schedule(framework))
    np.testing.assert_allclose(frozen, frozen[0], rtol=1e-5)
    learning = run(None)
    assert learning[-1] < frozen[-1] - 0.05


def zero_schedule(framework):
    if framework == "mxnet":
        from mxnet import lr_scheduler

        class Zero(lr_scheduler.LRScheduler):
            def __call__(self, num_update):
                return 0.0

        return Zero()
    return lambda step: 0.0


# --- the committed study over seeds (benchmarks/transformer_practice.py) ----------------------------------------


def test_the_committed_study_is_the_pages():
    """Every framework, recipe and seed; the page's settings; every field the page quotes exists."""
    import re
    from pathlib import Path

    from d2lcore import FRAMEWORKS
    from d2lcore.measurements import PRACTICE_RECIPES, practice_fields, read_measurement

    data = read_measurement("transformer_practice")
    assert set(data["runs"]) <= set(FRAMEWORKS) and len(data["runs"]) >= 2
    for runs in data["runs"].values():
        pairs = sorted((r["recipe"], r["seed"]) for r in runs)
        assert pairs == sorted((recipe, s) for recipe in PRACTICE_RECIPES for s in data["seeds"])
    assert len(data["seeds"]) >= 3
    s = data["settings"]
    page = (
        Path(__file__).resolve().parents[1] / "chapters/attention/transformer-prenorm.md"
    ).read_text()
    settings = f"= {s['num_hiddens']}, {s['peak_lr']}, {s['warmup_steps']}, {data['epochs']}"
    assert settings in page
    fields = practice_fields(data)
    quoted = re.findall(r"\{record\}`practice_study\.(\w+)", page)
    assert quoted and all(name in fields for name in quoted)
    # what the page says: in every framework measured and on every seed, post-norm without warmup ends with the
    # highest loss and the lowest held-out BLEU, pre-norm with the lowest loss and the highest BLEU
    for framework in data["runs"]:
        loss = {r: fields[f"{framework}_{r}_loss_per_token_min"] for r in PRACTICE_RECIPES}
        top = {r: fields[f"{framework}_{r}_loss_per_token_max"] for r in PRACTICE_RECIPES}
        assert (
            top["pre_norm"]
            < loss["post_norm_warmup"]
            <= top["post_norm_warmup"]
            < loss["post_norm"]
        )
        bleu_low = {r: fields[f"{framework}_{r}_held_out_bleu_min"] for r in PRACTICE_RECIPES}
        bleu_high = {r: fields[f"{framework}_{r}_held_out_bleu_max"] for r in PRACTICE_RECIPES}
        assert bleu_high["post_norm"] < bleu_low["post_norm_warmup"]
        assert bleu_high["post_norm_warmup"] < bleu_low["pre_norm"]
