"""Bad inputs, generated: every public callable of d2lcore, in every framework, given wrong dtypes, ranks, sizes,
ranges, empty inputs and mismatched models and vocabularies, raises a ValueError or TypeError (NotImplementedError
for the base classes, as documented) raised by d2lcore itself, whose message names the argument, what was
expected and what was given: never a framework-internal error, never a silent result. Valid edge cases (NaN in,
NaN out; an empty batch where the interface allows it) are checked as valid.

Hypothesis draws the inputs (derandomized: the same cases on every run). MXNet's cases run in a subprocess, so that
a crash of MXNet's native code would fail one test instead of killing the test run. Each process counts its cases
per framework and outcome and writes them to _build/bad-inputs/<framework>.json.

The valid edge cases checked: NaN in masked_softmax (NaN out where the NaN key is kept, ignored where masked),
lengths of 0 and above the number of steps, empty batches in masked_softmax and sequence_mask, -inf as
sequence_mask's value, MaskedSoftmaxCELoss with valid_len 0 (loss 0) and NaN logits (NaN only when counted),
BLEU of an empty prediction, truncate_pad of an empty line, an empty corpus and an empty build_array_nmt.
"""

import collections
import importlib
import json
import math
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from d2lcore import MODULE_OF
from d2lcore.common import interface_names
from tests.conftest import make_tensor

ROOT = Path(__file__).resolve().parents[1]
COUNTS_DIR = ROOT / "_build" / "bad-inputs"
ONLY = os.environ.get("D2L_BAD_INPUTS_FRAMEWORK")  # set in the MXNet subprocess
# MXNet's cases run in a subprocess (test_mxnet_cases_in_a_subprocess)
HERE = [ONLY] if ONLY else ["pytorch", "tensorflow"]
INDEX_DTYPE = {"mxnet": np.int32, "pytorch": np.int64, "tensorflow": np.int32}
# Generated cases per test and framework: bounded, for `make unit` on a busy machine (more for a longer search:
# D2L_BAD_INPUTS_EXAMPLES=100)
EXAMPLES = int(os.environ.get("D2L_BAD_INPUTS_EXAMPLES", "12"))

bounded = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

COUNTS = collections.defaultdict(collections.Counter)


@pytest.fixture(scope="module", autouse=True)
def write_counts():
    """After the module: this process's counts, one JSON file per framework."""
    yield
    COUNTS_DIR.mkdir(parents=True, exist_ok=True)
    for framework, counts in COUNTS.items():
        (COUNTS_DIR / f"{framework}.json").write_text(json.dumps(dict(counts), indent=1) + "\n")


def d2l_of(framework):
    return importlib.import_module(MODULE_OF[framework])


def T(framework, array, dtype=None):
    """A tensor of ``framework`` holding ``array`` (as ``dtype`` if given)."""
    array = np.asarray(array) if dtype is None else np.asarray(array).astype(dtype)
    return make_tensor(framework, array)


def ids(framework, array):
    return T(framework, array, INDEX_DTYPE[framework])


def ready(framework, layer):
    """MXNet's blocks need initialize() before their first call."""
    if framework == "mxnet":
        layer.initialize()
    return layer


def rng(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))


OURS = re.compile(r"[/\\]d2lcore[/\\]")


def clear_error(framework, argument, call, *, kinds=(ValueError, TypeError)):
    """Run ``call()``: it must raise one of ``kinds`` from d2lcore's own code, naming ``argument`` and saying
    what was expected ("must", "needs", ...) and what was given ("got ...")."""
    try:
        result = call()
    except kinds as e:
        error = e
    except Exception as e:  # a framework's or Python's own error: not one a learner can act on
        where = traceback.extract_tb(e.__traceback__)[-1]
        pytest.fail(
            f"unclear error for bad {argument}: {type(e).__name__} at {where.filename}: {e}"
        )
    else:
        pytest.fail(f"silent result for bad {argument}: {result!r:.300}")
    message = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # Keras puts our message in bold
    raised_at = traceback.extract_tb(error.__traceback__)[-1].filename
    assert OURS.search(raised_at), f"raised outside d2lcore ({raised_at}): {message}"
    assert re.search(rf"(?<!\w){re.escape(argument)}(?!\w)", message), (argument, message)
    assert re.search(r"\bmust\b|\bneeds?\b|\bexpected\b|\bfit\b|\bdefine\b", message), message
    assert re.search(r"\bgot\b|\bgive\b|\bdoes not\b", message), message
    COUNTS[framework]["clear error"] += 1


def valid(framework):
    COUNTS[framework]["valid"] += 1


frameworks = pytest.mark.parametrize("framework", HERE)

# --- strategies of bad values --------------------------------------------------------------------------------

bad_size = st.one_of(
    st.integers(-5, 0),
    st.floats(0.5, 8.5).filter(lambda x: x != int(x)),
    st.sampled_from(["4", None, True, 4.0, [4]]),
)
bad_index = st.one_of(
    st.integers(-9, -1), bad_size.filter(lambda v: not (type(v) is int and v == 0))
)
bad_dropout = st.one_of(
    st.floats(1.0, 10.0),
    st.floats(-10.0, -1e-3),
    st.sampled_from(["0.1", None, math.nan, math.inf, True, [0.1]]),
)
bad_length = st.one_of(
    st.integers(-9, -1).map(float),
    st.floats(0.1, 9.9).filter(lambda x: x != int(x)),
    st.sampled_from([math.nan, -math.inf]),
)


def lengths_with(framework, data, batch, bad):
    """(batch,) lengths with one bad entry, or a boolean mask (not lengths) when ``bad`` is "bool"."""
    if bad == "bool":
        return T(framework, np.ones(batch, dtype=bool))
    if bad == "negative int":
        return T(framework, -rng(data).integers(1, 5, batch).astype(np.int32))
    lens = rng(data).integers(0, 4, batch).astype(np.float32)
    lens[data.draw(st.integers(0, batch - 1))] = data.draw(bad_length)
    return T(framework, lens)


# --- section 3: masked softmax and attention scoring ----------------------------------------------------------


@frameworks
@bounded
@given(data=st.data())
def test_masked_softmax(framework, data):
    d2l = d2l_of(framework)
    batch, q, k = (
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(1, 5)),
    )
    X = T(framework, rng(data).normal(size=(batch, q, k)).astype(np.float32))
    case = data.draw(st.sampled_from(["int X", "rank", "lengths", "bool", "negative int", "shape"]))
    if case == "int X":
        clear_error(
            framework,
            "X",
            lambda: d2l.masked_softmax(T(framework, np.ones((batch, q, k), np.int32)), None),
        )
    elif case == "rank":
        clear_error(
            framework,
            "X",
            lambda: d2l.masked_softmax(T(framework, np.ones((batch, k), np.float32)), None),
        )
    elif case == "shape":
        lens = T(framework, np.ones((batch + 1,), np.int32))
        clear_error(framework, "valid_lens", lambda: d2l.masked_softmax(X, lens))
    else:
        lens = lengths_with(framework, data, batch, case)
        clear_error(framework, "valid_lens", lambda: d2l.masked_softmax(X, lens))


@frameworks
@bounded
@given(data=st.data())
def test_masked_softmax_valid_edge_cases(framework, data):
    """NaN in a kept score gives NaN weights in its row, length 0 gives zeros, and an empty batch gives an empty
    result. A masked NaN is ignored in MXNet and TensorFlow; PyTorch adds its mask to the scores (the fast path,
    see the scoring-functions page), so a NaN there makes its row NaN: NaN in, NaN out, never a number."""
    d2l = d2l_of(framework)
    k = data.draw(st.integers(2, 6))
    X = rng(data).normal(size=(2, 1, k)).astype(np.float32)
    nan_at = data.draw(st.integers(0, k - 1))
    X[:, 0, nan_at] = np.nan
    lens = np.array([nan_at + 1, nan_at], np.int32)  # example 0 keeps the NaN, example 1 masks it
    out = d2l.to_numpy(d2l.masked_softmax(T(framework, X), T(framework, lens)))
    # NaN at the NaN key (MXNet's softmax gives 0 to the other keys, PyTorch's and TensorFlow's NaN)
    assert np.isnan(out[0, 0, nan_at]) and np.isnan(out[0].sum())
    if framework == "pytorch":
        assert np.isnan(out[1]).all()
    elif nan_at:
        assert not np.isnan(out[1]).any() and (out[1, 0, nan_at:] == 0).all()
        np.testing.assert_allclose(out[1].sum(), 1, rtol=1e-5)
    else:
        assert (out[1] == 0).all()
    empty = d2l.masked_softmax(
        T(framework, np.zeros((0, 1, k), np.float32)), T(framework, np.zeros(0, np.int32))
    )
    assert tuple(empty.shape) == (0, 1, k)
    valid(framework)


@frameworks
@bounded
@given(data=st.data())
def test_attention_layers(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(
            ["hiddens", "dropout", "int queries", "other width", "dot dropout", "batch"]
        )
    )
    if case == "hiddens":
        clear_error(
            framework, "num_hiddens", lambda: d2l.AdditiveAttention(data.draw(bad_size), 0.0)
        )
        return
    if case in ("dropout", "dot dropout"):
        p = data.draw(bad_dropout)
        make = (
            (lambda: d2l.AdditiveAttention(4, p))
            if case == "dropout"
            else (lambda: d2l.DotProductAttention(p))
        )
        clear_error(framework, "dropout", make)
        return
    n, d = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    values = T(framework, np.ones((2, n, 3), np.float32))
    keys = T(framework, np.ones((2, n, d), np.float32))
    layer = ready(framework, d2l.AdditiveAttention(4, 0.0))
    if case == "int queries":
        clear_error(
            framework,
            "queries",
            lambda: layer(T(framework, np.ones((2, 1, d), np.int32)), keys, values),
        )
    elif case == "batch":
        queries = T(framework, np.ones((3, 1, d), np.float32))
        clear_error(framework, "keys", lambda: layer(queries, keys, values))
    else:  # built for d features, then called with another size
        layer(T(framework, np.ones((2, 1, d), np.float32)), keys, values)
        other = T(framework, np.ones((2, 1, d + data.draw(st.integers(1, 3))), np.float32))
        clear_error(framework, "queries", lambda: layer(other, keys, values))


# --- section 6: multi-head attention ------------------------------------------------------------------------


@frameworks
@bounded
@given(data=st.data())
def test_multihead_attention(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(["heads", "hiddens", "dropout", "int", "width", "lengths", "transpose"])
    )
    if case == "heads":
        heads = data.draw(
            st.one_of(bad_size, st.sampled_from([3, 5, 7]))
        )  # 3, 5, 7 do not divide 8
        clear_error(framework, "num_heads", lambda: d2l.MultiHeadAttention(8, heads, 0.0))
        return
    if case == "hiddens":
        clear_error(
            framework, "num_hiddens", lambda: d2l.MultiHeadAttention(data.draw(bad_size), 1, 0.0)
        )
        return
    if case == "dropout":
        clear_error(
            framework, "dropout", lambda: d2l.MultiHeadAttention(8, 2, data.draw(bad_dropout))
        )
        return
    if case == "transpose":
        X = T(framework, np.ones((2, 3, 8), np.float32))
        heads = data.draw(st.one_of(bad_size, st.sampled_from([3, 5])))
        fn = data.draw(st.sampled_from([d2l.transpose_qkv, d2l.transpose_output]))
        clear_error(
            framework, "num_heads", lambda: fn(X, heads)
        )  # 3, 5 divide neither 8 features nor 2 rows
        return
    layer = ready(framework, d2l.MultiHeadAttention(8, 2, 0.0))
    X = T(framework, np.ones((2, 3, 5), np.float32))
    if case == "int":
        Xi = T(framework, np.ones((2, 3, 5), np.int32))
        clear_error(framework, "queries", lambda: layer(Xi, X, X))
    elif case == "width":
        layer(X, X, X)
        other = T(framework, np.ones((2, 3, 5 + data.draw(st.integers(1, 4))), np.float32))
        clear_error(framework, "keys", lambda: layer(X, other, X))
    else:
        lens = lengths_with(
            framework, data, 2, data.draw(st.sampled_from(["float", "bool", "negative int"]))
        )
        clear_error(framework, "valid_lens", lambda: layer(X, X, X, lens))


# --- section 7: positional encoding; section 2: kernel regression -----------------------------------------------


@frameworks
@bounded
@given(data=st.data())
def test_positional_encoding(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(["hiddens", "max_len", "dropout", "int X", "offset", "too long"])
    )
    if case == "hiddens":
        clear_error(
            framework, "num_hiddens", lambda: d2l.PositionalEncoding(data.draw(bad_size), 0.0)
        )
        return
    if case == "max_len":
        clear_error(
            framework, "max_len", lambda: d2l.PositionalEncoding(4, 0.0, data.draw(bad_size))
        )
        return
    if case == "dropout":
        clear_error(framework, "dropout", lambda: d2l.PositionalEncoding(4, data.draw(bad_dropout)))
        return
    layer = ready(framework, d2l.PositionalEncoding(4, 0.0, max_len=10))
    steps = data.draw(st.integers(1, 10))
    if case == "int X":
        clear_error(framework, "X", lambda: layer(T(framework, np.ones((1, steps, 4), np.int32))))
        return
    X = T(framework, np.zeros((1, steps, 4), np.float32))
    if case == "offset":
        offset = data.draw(st.one_of(st.integers(-9, -1), st.sampled_from([1.5, "2", None])))
        clear_error(framework, "offset", lambda: layer(X, offset))
    else:
        clear_error(framework, "max_len", lambda: layer(X, 11 - steps))


@frameworks
@bounded
@given(data=st.data())
def test_kernel_regression(framework, data):
    d2l = d2l_of(framework)
    n, m = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    net = ready(framework, d2l.NWKernelRegression())
    q, kv = T(framework, np.zeros(n, np.float32)), T(framework, np.ones((n, m), np.float32))
    case = data.draw(st.sampled_from(["int", "shape", "lr", "epochs", "targets"]))
    if case == "int":
        clear_error(framework, "keys", lambda: net(q, T(framework, np.ones((n, m), np.int32)), kv))
    elif case == "shape":
        clear_error(
            framework, "values", lambda: net(q, kv, T(framework, np.ones((n + 1, m), np.float32)))
        )
    elif case == "targets":
        targets = T(framework, np.zeros((n, 1), np.float32))
        clear_error(framework, "targets", lambda: d2l.train_nw(net, q, kv, kv, targets))
    elif case == "lr":
        lr = data.draw(st.sampled_from([math.nan, math.inf, -0.5, "0.5", None]))
        clear_error(framework, "lr", lambda: d2l.train_nw(net, q, kv, kv, q, lr=lr))
    else:
        epochs = data.draw(st.one_of(st.integers(-3, 0), st.sampled_from([2.5, "5"])))
        clear_error(
            framework, "num_epochs", lambda: d2l.train_nw(net, q, kv, kv, q, num_epochs=epochs)
        )


# --- sections 4, 5: encoder–decoder, masks, loss ---------------------------------------------------------------


def seq2seq(framework, vocab=6):
    d2l = d2l_of(framework)
    encoder = ready(framework, d2l.Seq2SeqEncoder(vocab, 4, 8, 2))
    decoder = ready(framework, d2l.Seq2SeqAttentionDecoder(vocab, 4, 8, 2))
    return encoder, decoder


def bad_ids(framework, data, vocab, shape):
    """Token indices with one out of range, or fractional float indices."""
    kind = data.draw(st.sampled_from(["out of range", "float"]))
    X = rng(data).integers(0, vocab, shape)
    if kind == "float":
        return T(framework, X + data.draw(st.sampled_from([0.0, 0.5])), np.float32)
    X.flat[data.draw(st.integers(0, X.size - 1))] = data.draw(
        st.one_of(st.integers(-50, -1), st.integers(vocab, 99))
    )
    return ids(framework, X)


@frameworks
@bounded
@given(data=st.data())
def test_seq2seq_encoder(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(["vocab_size", "num_layers", "dropout", "ids", "no steps", "rank"])
    )
    if case in ("vocab_size", "num_layers"):
        sizes = dict(vocab_size=6, embed_size=4, num_hiddens=8, num_layers=2)
        sizes[case] = data.draw(bad_size)
        clear_error(framework, case, lambda: d2l.Seq2SeqEncoder(**sizes))
        return
    if case == "dropout":
        clear_error(
            framework, "dropout", lambda: d2l.Seq2SeqEncoder(6, 4, 8, 2, data.draw(bad_dropout))
        )
        return
    encoder, _ = seq2seq(framework)
    if case == "ids":
        clear_error(framework, "X", lambda: encoder(bad_ids(framework, data, 6, (2, 3))))
    elif case == "no steps":  # crashed MXNet's process before the check
        clear_error(
            framework,
            "X",
            lambda: encoder(ids(framework, np.zeros((data.draw(st.integers(1, 3)), 0)))),
        )
    else:
        clear_error(framework, "X", lambda: encoder(ids(framework, np.zeros((2, 3, 1)))))


@frameworks
@bounded
@given(data=st.data())
def test_seq2seq_decoder(framework, data):
    encoder, decoder = seq2seq(framework)
    X = ids(framework, np.ones((2, 3)))
    outputs = encoder(X)
    case = data.draw(
        st.sampled_from(["enc_outputs", "enc_valid_lens", "state", "ids", "lens in state"])
    )
    if case == "enc_outputs":
        clear_error(framework, "enc_outputs", lambda: decoder.init_state(outputs[0], None))
    elif case == "enc_valid_lens":
        lens = lengths_with(
            framework, data, 2, data.draw(st.sampled_from(["float", "bool", "negative int"]))
        )
        clear_error(framework, "enc_valid_lens", lambda: decoder.init_state(outputs, lens))
    elif case == "state":
        clear_error(
            framework, "state", lambda: decoder(X, outputs)
        )  # the encoder's outputs, not a state
    elif case == "ids":
        state = decoder.init_state(outputs, None)
        clear_error(framework, "X", lambda: decoder(bad_ids(framework, data, 6, (2, 2)), state))
    else:  # a state made by hand, with lengths that init_state would refuse
        lens = lengths_with(framework, data, 2, "negative int")
        clear_error(framework, "enc_valid_lens", lambda: decoder(X, (outputs[0], outputs[1], lens)))


@frameworks
@bounded
@given(data=st.data())
def test_decoder_checks_and_fix_keys(framework, data):
    """The decoder's helpers, called directly: check_decoder_init, check_decoder_call, fix_keys and its attend."""
    d2l = d2l_of(framework)
    encoder, _ = seq2seq(framework)
    X = ids(framework, np.ones((2, 3)))
    outputs = encoder(X)
    case = data.draw(
        st.sampled_from(
            [
                "init",
                "init lens",
                "call state",
                "call ids",
                "attention",
                "keys",
                "lens",
                "query",
                "add",
            ]
        )
    )
    if case == "width":  # the Transformer's checks, neutral
        clear_error(framework, "X", lambda: d2l.check_width("X", (2, 3, 5), 8))
        return
    if case == "state":
        clear_error(framework, "state", lambda: d2l.check_decoder_state(outputs, 2, 8))
        return
    if case == "add":  # AddNorm's check: Y must have the shape of X
        layer, Y = d2l.AddNorm(0.0), T(framework, np.ones((2, 3, 4), np.float32))
        clear_error(framework, "Y", lambda: d2l.check_add_norm(layer, outputs[0], Y))
    elif case == "init":
        clear_error(framework, "enc_outputs", lambda: d2l.check_decoder_init(outputs[0], None))
    elif case == "init lens":
        lens = lengths_with(framework, data, 2, data.draw(st.sampled_from(["float", "bool"])))
        clear_error(framework, "enc_valid_lens", lambda: d2l.check_decoder_init(outputs, lens))
    elif case == "call state":
        clear_error(framework, "state", lambda: d2l.check_decoder_call(X, outputs, 6))
    elif case == "call ids":
        state = (outputs[0], outputs[1], None)
        bad = bad_ids(framework, data, 6, (2, 2))
        clear_error(framework, "X", lambda: d2l.check_decoder_call(bad, state, 6))
    elif case == "attention":  # not an AdditiveAttention
        layer = d2l.DotProductAttention(0.0)
        clear_error(framework, "attention", lambda: d2l.fix_keys(layer, outputs[0], outputs[0]))
    else:
        layer = ready(framework, d2l.AdditiveAttention(8, 0.0))
        keys = outputs[0]  # (2, 3, 8)
        if case == "keys":
            clear_error(framework, "keys", lambda: d2l.fix_keys(layer, X, keys))
        elif case == "lens":
            lens = lengths_with(framework, data, 2, data.draw(st.sampled_from(["float", "bool"])))
            clear_error(framework, "valid_lens", lambda: d2l.fix_keys(layer, keys, keys, lens))
        else:  # queries of 2 steps, where attend takes one
            attend = d2l.fix_keys(layer, keys, keys)
            clear_error(
                framework, "queries", lambda: attend(T(framework, np.ones((2, 2, 8), np.float32)))
            )


@frameworks
@bounded
@given(data=st.data())
def test_sequence_mask(framework, data):
    d2l = d2l_of(framework)
    batch, steps = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    X = T(framework, np.ones((batch, steps, 2), np.float32))
    case = data.draw(st.sampled_from(["float", "bool", "negative int", "shape", "value", "rank"]))
    if case == "shape":
        clear_error(
            framework,
            "valid_len",
            lambda: d2l.sequence_mask(X, T(framework, np.ones(batch + 1, np.int32))),
        )
    elif case == "value":
        clear_error(
            framework,
            "value",
            lambda: d2l.sequence_mask(X, T(framework, np.ones(batch, np.int32)), "0"),
        )
    elif case == "rank":
        clear_error(
            framework,
            "X",
            lambda: d2l.sequence_mask(T(framework, np.ones(batch, np.float32)), [1] * batch),
        )
    else:  # a negative length crashed MXNet's process before the check
        lens = lengths_with(framework, data, batch, case)
        clear_error(framework, "valid_len", lambda: d2l.sequence_mask(X, lens))


@frameworks
@bounded
@given(data=st.data())
def test_sequence_mask_valid_edge_cases(framework, data):
    """NaN beyond a length is replaced by value, NaN within it is kept; a length above steps keeps every step;
    an empty batch gives an empty result."""
    d2l = d2l_of(framework)
    steps = data.draw(st.integers(1, 5))
    X = np.full((2, steps), np.nan, np.float32)
    value = data.draw(st.sampled_from([0, -1.5, -math.inf]))
    lens = [data.draw(st.integers(0, steps)), steps + data.draw(st.integers(1, 3))]
    out = d2l.to_numpy(d2l.sequence_mask(T(framework, X), ids(framework, lens), value))
    assert np.isnan(out[0, : lens[0]]).all() and (out[0, lens[0] :] == value).all()
    assert np.isnan(out[1]).all()
    empty = d2l.sequence_mask(
        T(framework, np.zeros((0, steps), np.float32)), ids(framework, np.zeros(0))
    )
    assert tuple(empty.shape) == (0, steps)
    valid(framework)


@frameworks
@bounded
@given(data=st.data())
def test_masked_loss(framework, data):
    d2l = d2l_of(framework)
    batch, steps, vocab = (
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(1, 4)),
        data.draw(st.integers(2, 9)),
    )
    loss = ready(framework, d2l.MaskedSoftmaxCELoss())
    pred = T(framework, rng(data).normal(size=(batch, steps, vocab)).astype(np.float32))
    label, lens = ids(framework, np.zeros((batch, steps))), ids(framework, np.full(batch, steps))
    case = data.draw(st.sampled_from(["label", "valid_len", "int pred", "shape"]))
    if case == "label":
        clear_error(
            framework,
            "label",
            lambda: loss(pred, bad_ids(framework, data, vocab, (batch, steps)), lens),
        )
    elif case == "valid_len":
        bad = lengths_with(
            framework, data, batch, data.draw(st.sampled_from(["float", "bool", "negative int"]))
        )
        clear_error(framework, "valid_len", lambda: loss(pred, label, bad))
    elif case == "int pred":
        clear_error(
            framework,
            "pred",
            lambda: loss(ids(framework, np.zeros((batch, steps, vocab))), label, lens),
        )
    else:
        clear_error(
            framework,
            "label",
            lambda: loss(pred, ids(framework, np.zeros((batch, steps + 1))), lens),
        )


@frameworks
@bounded
@given(data=st.data())
def test_masked_loss_valid_edge_cases(framework, data):
    """valid_len 0 gives a loss of 0 for that sequence; a NaN logit of a counted token gives NaN; a NaN logit
    beyond valid_len is not counted."""
    d2l = d2l_of(framework)
    steps, vocab = data.draw(st.integers(2, 5)), data.draw(st.integers(2, 6))
    pred = rng(data).normal(size=(3, steps, vocab)).astype(np.float32)
    pred[1, 0, 0] = np.nan  # counted in example 1
    pred[2, steps - 1, 0] = np.nan  # beyond example 2's length
    out = d2l.to_numpy(
        ready(framework, d2l.MaskedSoftmaxCELoss())(
            T(framework, pred),
            ids(framework, np.zeros((3, steps))),
            ids(framework, [0, steps, steps - 1]),
        )
    )
    assert out[0] == 0 and np.isnan(out[1]) and np.isfinite(out[2]) and out[2] > 0
    valid(framework)


# --- section 8: the Transformer ---------------------------------------------------------------------------------


@frameworks
@bounded
@given(data=st.data())
def test_transformer(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(
            ["encoder ids", "decoder ids", "ffn width", "addnorm int", "addnorm dropout", "sizes"]
        )
    )
    if case == "sizes":
        name = data.draw(
            st.sampled_from(["vocab_size", "num_hiddens", "ffn_num_hiddens", "num_layers"])
        )
        sizes = dict(
            vocab_size=6, num_hiddens=8, ffn_num_hiddens=16, num_heads=2, num_layers=1, dropout=0.0
        )
        sizes[name] = data.draw(bad_size)
        cls = data.draw(st.sampled_from([d2l.TransformerEncoder, d2l.TransformerDecoder]))
        clear_error(framework, name, lambda: cls(**sizes))
        return
    if case == "addnorm dropout":
        clear_error(framework, "dropout", lambda: d2l.AddNorm(data.draw(bad_dropout)))
        return
    if case == "addnorm int":
        layer = ready(framework, d2l.AddNorm(0.0))
        Xi = ids(framework, np.ones((2, 3, 4)))
        clear_error(framework, "X", lambda: layer(Xi, Xi))
        return
    if case == "ffn width":
        ffn = ready(framework, d2l.PositionWiseFFN(8, 4))
        ffn(T(framework, np.ones((2, 3, 4), np.float32)))
        other = T(framework, np.ones((2, 3, 4 + data.draw(st.integers(1, 3))), np.float32))
        clear_error(framework, "X", lambda: ffn(other))
        return
    encoder = ready(framework, d2l.TransformerEncoder(6, 8, 16, 2, 1, 0.0))
    X = bad_ids(framework, data, 6, (2, 3))
    if case == "encoder ids":
        clear_error(framework, "X", lambda: encoder(X))
        return
    decoder = ready(framework, d2l.TransformerDecoder(6, 8, 16, 2, 1, 0.0))
    state = decoder.init_state(encoder(ids(framework, np.ones((2, 3)))), None)
    clear_error(framework, "X", lambda: decoder(X, state))


@frameworks
@bounded
@given(data=st.data())
def test_transformer_blocks(framework, data):
    d2l = d2l_of(framework)
    X = ids(framework, np.ones((2, 3, 8)))
    if data.draw(st.booleans()):
        block = ready(framework, d2l.TransformerEncoderBlock(8, 16, 2, 0.0))
        clear_error(framework, "X", lambda: block(X))
    else:
        block = ready(framework, d2l.TransformerDecoderBlock(8, 16, 2, 0.0))
        clear_error(framework, "X", lambda: block(X, T(framework, np.ones((2, 3, 8), np.float32))))


@frameworks
@bounded
@given(data=st.data())
def test_data_and_weights(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(["arrays", "sizes", "batch_size", "nmt", "export", "xavier", "last_query"])
    )
    if case == "arrays":
        clear_error(
            framework,
            "data_arrays",
            lambda: d2l.load_array(data.draw(st.sampled_from([[], None, "x"])), 2),
        )
    elif case == "sizes":
        arrays = (np.zeros(3), np.zeros(data.draw(st.integers(0, 2))))
        clear_error(framework, "data_arrays", lambda: d2l.load_array(arrays, 2))
    elif case == "batch_size":
        clear_error(
            framework, "batch_size", lambda: d2l.load_array((np.zeros(3),), data.draw(bad_size))
        )
    elif case == "nmt":
        name = data.draw(st.sampled_from(["batch_size", "num_steps", "num_examples"]))
        args = dict(batch_size=2, num_steps=4, num_examples=10)
        args[name] = data.draw(
            bad_size.filter(lambda v: not (name == "num_examples" and v is None))
        )
        clear_error(framework, name, lambda: d2l.load_data_nmt(**args))
    elif case == "export":  # sizes inferred on the first call: nothing to export before it
        layer = d2l.MultiHeadAttention(8, 2, 0.0)
        clear_error(framework, "net", lambda: d2l.export_weights(ready(framework, layer)))
    elif case == "xavier":
        given_weights = data.draw(st.sampled_from([None, [np.ones((2, 2))], "w"]))
        clear_error(framework, "weights", lambda: d2l.xavier_uniform_weights(given_weights))
    else:
        weights = T(framework, np.ones(data.draw(st.integers(1, 4)), np.float32))
        clear_error(framework, "weights", lambda: d2l.last_query(weights))


# --- training and translation -------------------------------------------------------------------------------------


def toy(framework, vocab_tokens=("<pad>", "<bos>", "<eos>"), lengths=None, vocab_size=None):
    d2l = d2l_of(framework)
    vocab = d2l.Vocab(["a", "b", "a", "b"], min_freq=1, reserved_tokens=list(vocab_tokens))
    size = len(vocab) if vocab_size is None else vocab_size
    X = np.array([[3, 4, 5, 1], [4, 5, 1, 1]]) % len(vocab)
    lens = np.array([3, 2]) if lengths is None else np.asarray(lengths)
    data_iter = d2l.load_array((X, lens, X, lens), batch_size=2)
    encoder, decoder = d2l.Seq2SeqEncoder(size, 4, 8, 1), d2l.Seq2SeqAttentionDecoder(size, 4, 8, 1)
    return d2l.EncoderDecoder(encoder, decoder), data_iter, vocab


@frameworks
@bounded
@given(data=st.data())
def test_training(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(
        st.sampled_from(["epochs", "lr", "vocab", "empty", "zero lengths", "small model"])
    )
    cpu = d2l.cpu()
    if case == "epochs":
        net, data_iter, vocab = toy(framework)
        epochs = data.draw(st.one_of(st.integers(-3, 0), st.sampled_from([1.5, "2", None])))
        clear_error(
            framework,
            "num_epochs",
            lambda: d2l.train_seq2seq(net, data_iter, 0.01, epochs, vocab, cpu),
        )
    elif case == "lr":
        net, data_iter, vocab = toy(framework)
        lr = data.draw(st.sampled_from([math.nan, math.inf, -0.01, "0.01", None]))
        clear_error(framework, "lr", lambda: d2l.train_seq2seq(net, data_iter, lr, 1, vocab, cpu))
    elif case == "vocab":  # without <bos> the decoder's first input would be <unk>
        net, data_iter, vocab = toy(framework, vocab_tokens=("<pad>", "<eos>"))
        clear_error(
            framework, "tgt_vocab", lambda: d2l.train_seq2seq(net, data_iter, 0.01, 1, vocab, cpu)
        )
        clear_error(
            framework, "tgt_vocab", lambda: d2l.predict_seq2seq(net, "a b", vocab, vocab, 3, cpu)
        )
    elif case == "empty":
        net, _, vocab = toy(framework)
        clear_error(framework, "data_iter", lambda: d2l.train_seq2seq(net, [], 0.01, 1, vocab, cpu))
    elif case == "zero lengths":
        net, data_iter, vocab = toy(framework, lengths=[0, 0])
        clear_error(
            framework, "data_iter", lambda: d2l.train_seq2seq(net, data_iter, 0.01, 1, vocab, cpu)
        )
    else:  # a model built for a smaller vocabulary than the data's
        net, data_iter, vocab = toy(framework, vocab_size=data.draw(st.integers(1, 4)))
        clear_error(framework, "X", lambda: d2l.train_seq2seq(net, data_iter, 0.01, 1, vocab, cpu))


# --- the rest of the interface: seeds, devices, weights, base classes, neutral helpers --------------------------


@frameworks
@bounded
@given(data=st.data())
def test_runtime_and_weights(framework, data):
    d2l = d2l_of(framework)
    case = data.draw(st.sampled_from(["seed", "gpu", "weights", "load"]))
    if case == "seed":
        clear_error(
            framework,
            "seed",
            lambda: d2l.set_seed(data.draw(bad_index)),
        )
    elif case == "gpu":
        clear_error(framework, "i", lambda: d2l.try_gpu(data.draw(bad_index)))
    else:
        layer = ready(framework, d2l.DotProductAttention(0.0))  # no weights: {} fits
        given_weights = data.draw(st.sampled_from([[("w", np.ones(2))], None, "weights"]))
        if case == "load":
            clear_error(framework, "weights", lambda: d2l.load_weights(layer, given_weights))
        else:
            clear_error(framework, "weights", lambda: d2l.load_weights(layer, {"w": np.ones(2)}))


@frameworks
@bounded
@given(data=st.data())
def test_tensor_checks(framework, data):
    """The framework's own checks that layers call: check_float and check_token_ids."""
    d2l = d2l_of(framework)
    shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    if data.draw(st.booleans()):
        dtype = data.draw(st.sampled_from([np.int32, np.int64, bool]))
        clear_error(
            framework, "keys", lambda: d2l.check_float(keys=T(framework, np.ones(shape, dtype)))
        )
    else:
        clear_error(
            framework, "X", lambda: d2l.check_token_ids("X", bad_ids(framework, data, 5, shape), 5)
        )


@frameworks
def test_base_classes(framework):
    d2l = d2l_of(framework)
    X = ids(framework, np.ones((1, 2)))
    for layer, method, call in (
        (d2l.Encoder(), "forward", lambda layer: layer(X)),
        (d2l.Decoder(), "init_state", lambda layer: layer.init_state(X)),
        (d2l.Decoder(), "forward", lambda layer: layer(X, None)),
        (d2l.AttentionDecoder(), "attention_weights", lambda layer: layer.attention_weights),
    ):
        method = "call" if framework == "tensorflow" and method == "forward" else method
        clear_error(framework, method, lambda c=call, x=layer: c(x), kinds=(NotImplementedError,))


@pytest.mark.skipif(ONLY is not None, reason="framework-neutral: run once, in the main process")
@bounded
@given(data=st.data())
def test_neutral(data):
    import d2lcore.common as d2l

    case = data.draw(
        st.sampled_from(
            [
                "truncate_pad",
                "to_numpy",
                "timer",
                "vocab",
                "build_array",
                "bleu",
                "tokenize",
                "int",
                "preprocess",
            ]
            + ["checks", "positions", "helpers"]
        )
    )
    if case == "truncate_pad":
        line = data.draw(st.one_of(st.text(min_size=1, max_size=5), st.integers(0, 9), st.none()))
        clear_error("neutral", "line", lambda: d2l.truncate_pad(line, 4, "<pad>"))
    elif case == "to_numpy":
        clear_error("neutral", "to_numpy", lambda: d2l.to_numpy(None))
    elif case == "timer":
        clear_error("neutral", "stop", lambda: d2l.Timer().avg())
    elif case == "vocab":
        bad = data.draw(
            st.sampled_from([dict(min_freq=-1), dict(min_freq=1.5), dict(reserved_tokens="<pad>")])
        )
        clear_error("neutral", next(iter(bad)), lambda: d2l.Vocab(["a"], **bad))
    elif case == "build_array":
        vocab = d2l.Vocab(
            ["a"], reserved_tokens=data.draw(st.sampled_from([[], ["<pad>"], ["<eos>"]]))
        )
        clear_error("neutral", "vocab", lambda: d2l.build_array_nmt([["a"]], vocab, 3))
    elif case == "bleu":
        k = data.draw(st.one_of(st.integers(-3, 0), st.sampled_from([1.5, "2"])))
        clear_error("neutral", "k", lambda: d2l.bleu("a b", "a b", k))
    elif case == "tokenize":
        n = data.draw(st.integers(3, 9))
        clear_error("neutral", "num_examples", lambda: d2l.tokenize_nmt("go .\tva !\n", n))
    elif case == "preprocess":
        text = data.draw(st.one_of(st.none(), st.integers(), st.binary(max_size=3)))
        clear_error("neutral", "text", lambda: d2l.preprocess_nmt(text))
    elif case == "checks":
        x = np.zeros(data.draw(st.integers(1, 3)))
        which = data.draw(
            st.sampled_from(["check_shapes", "check_heads", "valid_lens_spec", "check_lengths"])
        )
        call, name = {
            "check_shapes": (lambda: d2l.check_shapes(keys=(x, "n m")), "keys"),
            "check_heads": (lambda: d2l.check_heads(8, 3), "num_heads"),
            "valid_lens_spec": (lambda: d2l.valid_lens_spec(np.zeros((1, 1, 1))), "valid_lens"),
            "check_lengths": (lambda: d2l.check_lengths("lens", x - 1), "lens"),
        }[which]
        clear_error("neutral", name, call)
    elif case == "helpers":
        owner = type("Layer", (), {})()  # any object: check_built_widths keeps the widths in it
        d2l.check_built_widths(owner, X=np.zeros((2, 3)))
        which, call = data.draw(
            st.sampled_from(
                [
                    ("lr", lambda: d2l.check_real("lr", math.nan, minimum=0)),
                    ("dropout", lambda: d2l.check_dropout(1.5)),
                    ("embed_size", lambda: d2l.check_sizes(embed_size=0)),
                    ("X", lambda: d2l.check_steps("X", 0)),
                    ("state", lambda: d2l.check_tuple("state", [1], ("enc_outputs", "hidden"))),
                    ("tgt_vocab", lambda: d2l.check_vocab("tgt_vocab", d2l.Vocab(), ("<bos>",))),
                    ("X", lambda: d2l.check_built_widths(owner, X=np.zeros((2, 4)))),
                    ("data_iter", lambda: d2l.check_epoch_tokens(0, 0)),
                ]
            )
        )
        clear_error("neutral", which, call)
    elif case == "positions":
        X = np.zeros((1, data.draw(st.integers(2, 9)), 4))
        clear_error("neutral", "max_len", lambda: d2l.check_positions(X, 4, 0, 1))
    else:
        value = data.draw(st.one_of(st.floats(allow_nan=True), st.text(max_size=3), st.booleans()))
        clear_error("neutral", "size", lambda: d2l.check_int("size", value))


@pytest.mark.skipif(ONLY is not None, reason="framework-neutral: run once, in the main process")
def test_neutral_valid_edge_cases():
    import d2lcore.common as d2l

    assert d2l.bleu("", "a b", 2) == 0.0  # an empty prediction scores 0
    assert d2l.truncate_pad([], 2, 0) == [0, 0]
    assert d2l.tokenize_nmt("", None) == ([], [])
    array, lens = d2l.build_array_nmt([], d2l.Vocab(reserved_tokens=["<pad>", "<eos>"]), 3)
    assert array.shape == (0, 3) and lens.shape == (0,)
    COUNTS["neutral"]["valid"] += 4


def test_every_public_callable_is_driven():
    """Each name of the interface is called with bad inputs above, or listed here with the reason why not."""
    source = Path(__file__).read_text(encoding="utf-8")
    exempt = {
        # constants and modules, no inputs
        "LAYER_NORM_EPS": "a constant",
        "plt": "matplotlib's module",
        "use_svg_display": "takes no argument",
        "num_gpus": "takes no argument",
        "not_implemented": "makes the error of the base classes (test_base_classes)",
        "cpu": "takes no argument",
        # plotting and records: matplotlib and the records' own tests check their inputs (test_common.py)
        "show_heatmaps": "plotting",
        "plot": "plotting",
        "set_axes": "plotting",
        "set_figsize": "plotting",
        "Animator": "plotting",
        "show_record": "records (tests/test_pipeline.py)",
        "show_training": "records (tests/test_pipeline.py)",
        # downloads and the corpus: faults are driven against a local server in tests/test_datasets.py
        "download": "tests/test_datasets.py",
        "download_extract": "tests/test_datasets.py",
        "read_data_nmt": "tests/test_datasets.py",
    }
    missing = [
        name
        for name in interface_names()
        if name not in exempt
        and not re.search(rf"\b{re.escape(name)}\b", source.split("def test_every")[0])
    ]
    assert not missing, f"public names that no test above drives with bad inputs: {missing}"


@pytest.mark.skipif(ONLY is not None, reason="this is the parent process's test")
def test_mxnet_cases_in_a_subprocess():
    """The MXNet cases, in a child pytest: a crash (a signal) fails here instead of killing this run."""
    env = dict(os.environ, D2L_BAD_INPUTS_FRAMEWORK="mxnet")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", __file__],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, (
        f"exit status {result.returncode}:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
    )
    counts = json.loads((COUNTS_DIR / "mxnet.json").read_text())
    assert counts.get("clear error", 0) > 0 and counts.get("valid", 0) > 0
