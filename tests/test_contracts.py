"""The contracts of the taught code (d2lcore/contracts/) and the engine that checks them (its engine.py).

- every contract names exactly the parameters of what it guards, in every framework (a stale contract fails here,
  not at a reader's call), and every taught class and function has one;
- checks only check: every taught class and function computes the same with its checks off as with them on;
- the engine: once per outermost call, errors that name what the reader called, a class redefined on a page with
  another signature, each spec's message.
"""

import importlib
import inspect
import sys

import numpy as np
import pytest

from d2lcore import FRAMEWORKS, MODULE_OF, contracts
from d2lcore.contracts import engine as contract
from d2lcore.contracts.engine import (
    ANY,
    DROPOUT,
    AnyFramework,
    Bool,
    Contract,
    Fields,
    Floats,
    Ids,
    Int,
    Lengths,
    ListOf,
    Real,
    Text,
    VocabWith,
    attach,
    unchecked,
    unnamed,
)
from d2lcore.text import Vocab, encode_source, nmt_arrays
from tests.conftest import make_tensor


def d2l_of(framework):
    return importlib.import_module(MODULE_OF[framework])


def hooks_of(framework):
    return importlib.import_module(MODULE_OF[framework] + ".tensors")


def taught(module):
    """The checked classes and functions of ``module`` (a framework's d2lcore) and its submodules, by name."""
    found = {}
    objects = {}
    for sub in [
        module,
        *(m for n, m in sys.modules.items() if n.startswith(module.__name__ + ".")),
    ]:
        objects.update(vars(sub))
    for name, obj in objects.items():
        if isinstance(obj, type) and "__d2l_contract__" in vars(obj):
            found[name] = obj
        elif (
            callable(obj)
            and hasattr(obj, "__wrapped__")
            and isinstance(getattr(contracts, name, None), Contract)
        ):
            found[name] = obj
    return found


class _All(dict):
    """{framework: its taught classes and functions}, found on first use."""

    def __missing__(self, framework):
        self[framework] = taught(d2l_of(framework))
        return self[framework]

    def values(self):
        return [self[framework] for framework in FRAMEWORKS]

    def items(self):
        return [(framework, self[framework]) for framework in FRAMEWORKS]


ALL = _All()


def signatures(framework, name, obj):
    """{part of the contract: (signature, is a method)} of the taught ``obj``."""
    if not isinstance(obj, type):
        return {"call": (inspect.signature(obj), False)}
    fw = hooks_of(framework)
    parts = {"__init__": (inspect.signature(obj.__init__), True)}
    if getattr(contracts, name).call:
        parts["call"] = (fw.call_signature(obj), True)
    for method in getattr(contracts, name).methods:
        parts[method] = (inspect.signature(getattr(obj, method)), True)
    return parts


def test_every_contract_guards_something_and_every_taught_name_has_one():
    guarded = set().union(*(set(found) for found in ALL.values()))
    declared = {name for name, value in vars(contracts).items() if isinstance(value, Contract)} - {
        "Doubler"
    }
    assert declared - guarded == set(), "contracts that guard nothing"
    for framework, found in ALL.items():
        assert len(found) >= 40, (framework, sorted(found))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_each_contract_names_exactly_the_parameters_it_guards(framework):
    fw = hooks_of(framework) if framework else AnyFramework
    for name, obj in ALL[framework].items():
        contract_ = getattr(contracts, name)
        for part, (signature, method) in signatures(framework, name, obj).items():
            specs = contract_.parts()[part]
            assert unnamed(signature, specs, fw, method) == [], (
                f"{name}.{part}: parameters its contract lacks"
            )


def test_each_spec_names_a_parameter_of_some_framework():
    """A spec whose parameter no framework has is stale (the signature changed, the contract did not)."""
    for name, value in vars(contracts).items():
        if not isinstance(value, Contract) or name == "Doubler":
            continue
        for part, specs in value.parts().items():
            parameters = set()
            for framework in FRAMEWORKS:
                obj = ALL[framework].get(name)
                if obj is not None and part in signatures(framework, name, obj):
                    parameters |= set(signatures(framework, name, obj)[part][0].parameters)
            assert set(specs) <= parameters, (
                f"{name}.{part}: {set(specs) - parameters} in no signature"
            )


# --- checks only check: the same outputs with the checks off -------------------------------------------------------


def _numpy(value):
    """Nested outputs as a flat list of NumPy arrays (None and Python values kept)."""
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _numpy(item)]
    if hasattr(value, "shape"):
        return [np.asarray(contract.AnyFramework.values(value))]
    return [value]


def examples(framework):
    """{taught name: call()} on valid inputs, each call building its layer afresh with the same seed."""
    d2l = d2l_of(framework)
    rng = np.random.default_rng(0)

    def T(shape, dtype=np.float32):
        return make_tensor(framework, rng.standard_normal(shape).astype(dtype))

    def ids(shape, vocab=6):
        dtype = np.int64 if framework == "pytorch" else np.int32
        return make_tensor(framework, rng.integers(0, vocab, shape).astype(dtype))

    def lens(values):
        return make_tensor(
            framework, np.array(values, dtype=np.int32 if framework != "pytorch" else np.int64)
        )

    def L(layer):
        """A layer ready to call: MXNet's blocks are initialised first."""
        if framework == "mxnet":
            layer.initialize()
        return layer

    q, k, v = T((2, 3, 4)), T((2, 5, 4)), T((2, 5, 6))
    X, src = T((2, 5, 8)), ids((2, 5))
    vocab = Vocab(["a", "b"], reserved_tokens=["<pad>", "<bos>", "<eos>"])

    def enc_dec_rnn():
        encoder, decoder = (
            L(d2l.Seq2SeqEncoder(6, 4, 8, 2)),
            L(d2l.Seq2SeqAttentionDecoder(6, 4, 8, 2)),
        )
        outputs = encoder(src, lens([3, 5]))
        return decoder(ids((2, 3)), decoder.init_state(outputs, lens([3, 5])))

    def plain_rnn():
        encoder, decoder = L(d2l.Seq2SeqEncoder(6, 4, 8, 2)), L(d2l.Seq2SeqDecoder(6, 4, 8, 2))
        outputs = encoder(src)
        return decoder(ids((2, 3)), decoder.init_state(outputs))

    def rnn_net():
        encoder, decoder = d2l.Seq2SeqEncoder(6, 4, 8, 1), d2l.Seq2SeqAttentionDecoder(6, 4, 8, 1)
        return L(d2l.EncoderDecoder(encoder, decoder))

    def train():
        (X, X_len, Y, Y_len) = (
            np.array(a) for a in ([[4, 5, 2, 0]] * 2, [3, 3], [[5, 4, 2, 0]] * 2, [3, 3])
        )
        data = d2l.load_array((X, X_len, Y, Y_len), 2)
        return d2l.train_seq2seq(rnn_net(), data, 0.01, 2, vocab, d2l.cpu())

    def predict():
        return d2l.predict_seq2seq(rnn_net(), "a b", vocab, vocab, 4, d2l.cpu(), True)

    def beams():
        encoder = d2l.TransformerEncoder(6, 8, 16, 2, 2, 0.0)
        decoder = d2l.TransformerDecoder(6, 8, 16, 2, 2, 0.0)
        net = L(d2l.EncoderDecoder(encoder, decoder))
        return d2l.beam_search(net, ["a b", "b"], vocab, vocab, 4, d2l.cpu(), 3, 0.6, True)

    def transformer():
        encoder = L(d2l.TransformerEncoder(6, 8, 16, 2, 2, 0.0))
        decoder = L(d2l.TransformerDecoder(6, 8, 16, 2, 2, 0.0))
        enc_outputs = encoder(src, lens([3, 5]))
        return decoder(ids((2, 4)), decoder.init_state(enc_outputs, lens([3, 5])))

    def pre_norm_transformer():
        encoder = L(d2l.PreNormTransformerEncoder(6, 8, 16, 2, 2, 0.0))
        decoder = L(d2l.PreNormTransformerDecoder(6, 8, 16, 2, 2, 0.0))
        enc_outputs = encoder(src, lens([3, 5]))
        return decoder(ids((2, 4)), decoder.init_state(enc_outputs, lens([3, 5])))

    def tied_transformer():
        encoder = L(d2l.TransformerEncoder(6, 8, 16, 2, 2, 0.0))
        decoder = L(d2l.TiedTransformerDecoder(6, 8, 16, 2, 2, 0.0))
        enc_outputs = encoder(src, lens([3, 5]))
        return decoder(ids((2, 4)), decoder.init_state(enc_outputs, lens([3, 5])))

    def prefix_lm():
        net = L(d2l.PrefixLM(6, 8, 16, 2, 2, 0.0, max_len=10))
        _, caches = net(ids((2, 4)), lens([2, 3]))
        return net(ids((2, 2)), lens([2, 3]), caches)

    def causal_attention():
        layer = L(d2l.CausalSelfAttention(8, 2, 0.0))
        _, cache = layer(X, lens([2, 4]))
        return layer(T((2, 3, 8)), lens([2, 4]), cache)

    def lm_generate():
        net = L(d2l.PrefixLM(6, 8, 16, 2, 2, 0.0, max_len=10))
        prompt = make_tensor(framework, np.array([[3, 1, 4], [1, 5, 2]], np.int32))
        return d2l.generate(net, prompt, 3, 1)

    calls = {
        "masked_softmax": lambda: d2l.masked_softmax(T((2, 3, 5)), lens([2, 4])),
        "AdditiveAttention": lambda: L(d2l.AdditiveAttention(8, 0.0))(q, k, v, lens([2, 4])),
        "DotProductAttention": lambda: L(d2l.DotProductAttention(0.0))(q, k, v, lens([2, 4])),
        "transpose_qkv": lambda: d2l.transpose_qkv(X, 2),
        "transpose_output": lambda: d2l.transpose_output(T((4, 5, 4)), 2),
        "MultiHeadAttention": lambda: L(d2l.MultiHeadAttention(8, 2, 0.0))(q, k, v, lens([2, 4])),
        "GroupedQueryAttention": lambda: L(d2l.GroupedQueryAttention(8, 4, 2, 0.0))(
            q, k, v, lens([2, 4])
        ),
        "tiled_attention": lambda: d2l.tiled_attention(
            q, T((2, 5, 4)), v, lens([2, 4]), causal=True, tile_size=2
        ),
        "PositionalEncoding": lambda: L(d2l.PositionalEncoding(8, 0.0))(X, 3),
        "NWKernelRegression": lambda: L(d2l.NWKernelRegression())(T(4), T((4, 3)), T((4, 3))),
        "Seq2SeqEncoder": lambda: L(d2l.Seq2SeqEncoder(6, 4, 8, 2))(src),
        "Seq2SeqAttentionDecoder": enc_dec_rnn,
        "Seq2SeqDecoder": plain_rnn,
        "sequence_mask": lambda: d2l.sequence_mask(T((2, 5)), lens([2, 4])),
        "MaskedSoftmaxCELoss": lambda: L(d2l.MaskedSoftmaxCELoss())(
            T((2, 5, 6)), ids((2, 5)), lens([2, 4])
        ),
        "PositionWiseFFN": lambda: L(d2l.PositionWiseFFN(16, 8))(X),
        "AddNorm": lambda: L(d2l.AddNorm(8, 0.0) if framework == "pytorch" else d2l.AddNorm(0.0))(
            X, X
        ),
        "TransformerEncoderBlock": lambda: L(d2l.TransformerEncoderBlock(8, 16, 2, 0.0))(
            X, lens([2, 4])
        ),
        "TransformerDecoderBlock": lambda: L(d2l.TransformerDecoderBlock(8, 16, 2, 0.0))(
            X, X, lens([2, 4])
        ),
        "TransformerEncoder": lambda: L(d2l.TransformerEncoder(6, 8, 16, 2, 2, 0.0))(
            src, lens([2, 4])
        ),
        "TransformerDecoder": transformer,
        "WarmupSchedule": lambda: [float(d2l.WarmupSchedule(8, 3)(t)) for t in (1, 2, 5)],
        "PreNormEncoderBlock": lambda: L(d2l.PreNormEncoderBlock(8, 16, 2, 0.0))(X, lens([2, 4])),
        "PreNormDecoderBlock": lambda: L(d2l.PreNormDecoderBlock(8, 16, 2, 0.0))(
            X, X, lens([2, 4])
        ),
        "PreNormTransformerEncoder": lambda: L(d2l.PreNormTransformerEncoder(6, 8, 16, 2, 2, 0.0))(
            src, lens([2, 4])
        ),
        "PreNormTransformerDecoder": pre_norm_transformer,
        "LabelSmoothedCELoss": lambda: L(d2l.LabelSmoothedCELoss(0.1))(
            T((2, 5, 6)), ids((2, 5)), lens([2, 4])
        ),
        "TiedTransformerDecoder": tied_transformer,
        "show_smoothing_study": lambda: d2l.show_smoothing_study("pytorch"),
        "build_array_nmt": lambda: d2l.build_array_nmt([["a", "b"], ["b"]], vocab, 4),
        "bleu": lambda: d2l.bleu("a b c", "a b d", 2),
        "Vocab": lambda: Vocab([["a", "b"], ["b"]], reserved_tokens=["<pad>"]).token_freqs,
        "truncate_pad": lambda: d2l.truncate_pad([1, 2, 3], 5, 0),
        "preprocess_nmt": lambda: d2l.preprocess_nmt("Go.\u202fNow!"),
        "tokenize_nmt": lambda: d2l.tokenize_nmt("go .\tva !\nhi .\tsalut !", 1),
        "encode_source": lambda: encode_source("a b", vocab, 4),
        "nmt_arrays": lambda: nmt_arrays(6, 20)[0],
        "reversal_pairs": lambda: d2l.reversal_pairs(3),
        "reversal_arrays": lambda: d2l.reversal_arrays(3, 10)[0],
        "neighbour_arrays": lambda: d2l.neighbour_arrays(3),
        "corpus_scores": lambda: d2l.corpus_scores(["a b c"], [["a b d"]]),
        "loo_loss": lambda: d2l.loo_loss(np.arange(4.0), np.array([0.0, 1, 0, 1]), 1.5),
        "show_loo_minimum": lambda: d2l.show_loo_minimum(
            np.arange(4.0), np.array([0.0, 1, 0, 1]), 0.1
        ),
        "translate_corpus": lambda: d2l.translate_corpus(str.upper, CORPUS),
        "show_translations": lambda: d2l.show_translations(str.upper, ["go ."], ["va !"]),
        "evaluate_translations": lambda: d2l.evaluate_translations(str.upper, vocab),
        "evaluate_held_out": lambda: d2l.evaluate_held_out(str.upper, vocab, "held"),
        "evaluate_reversal": lambda: d2l.evaluate_reversal(lambda s: (s[::-1], []), 3),
        "train_nw": lambda: d2l.train_nw(
            L(d2l.NWKernelRegression()), T(4), T((4, 3)), T((4, 3)), T(4), 0.5, 2
        ),
        "train_seq2seq": train,
        "predict_seq2seq": predict,
        "beam_search": beams,
        "rotary_embedding": lambda: d2l.rotary_embedding(T((2, 3, 5, 4)), 2),
        "CausalSelfAttention": causal_attention,
        "DecoderOnlyBlock": lambda: L(d2l.DecoderOnlyBlock(8, 16, 2, 0.0))(X, lens([2, 4])),
        "PrefixLM": prefix_lm,
        "generate": lm_generate,
    }
    if (
        framework == "tensorflow"
    ):  # its own GRU, built from GRU cells (Sequence-to-Sequence Toolkit)
        from d2lcore.tensorflow.rnn import GRU

        calls["GRU"] = lambda: GRU(8, 2)(T((2, 3, 4)))
    return calls


DRAWS_ONLY = {"show_heatmaps", "show_neighbour_heads"}
"""The taught functions that only draw (they return nothing to compare)."""
CORPUS = "go .\tva !\nhi .\tsalut !\n"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_checks_off_compute_the_same_as_checks_on(framework):
    d2l = d2l_of(framework)
    assert set(examples(framework)) | DRAWS_ONLY == set(ALL[framework]), (
        "a taught name without an example"
    )
    for name in examples(framework):
        d2l.set_seed(0)
        on = _numpy(examples(framework)[name]())
        d2l.set_seed(0)
        with unchecked():
            off = _numpy(examples(framework)[name]())
        assert len(on) == len(off), name
        for a, b in zip(on, off, strict=True):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b, err_msg=name)
            else:
                assert a == b, name


# --- the engine ---------------------------------------------------------------------------------------------------


class Hooks(AnyFramework):
    @staticmethod
    def call_signature(cls):
        return inspect.signature(cls.forward)


seen = []


def _note(call):
    seen.append((call.name, dict(call.arguments)))


contracts.Doubler = Contract(init=dict(scale=Int(1)), call=dict(x=Real()), rules=(_note,))


class Doubler:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, x):
        return 2 * x * self.scale


class Twice(Doubler):
    """An undecorated subclass: its arguments may differ, so its parent's contract does not run."""


attach(Doubler, Hooks)


@pytest.fixture(autouse=True)
def clear():
    seen.clear()
    yield
    assert contract.outermost()  # every checked call left, errors included


def test_a_checked_class_is_checked_once_per_outermost_call_and_names_itself():
    d = Doubler(3)
    assert d(2) == 12 and seen == [("Doubler", {"x": 2})]
    with pytest.raises(ValueError, match=r"^Doubler: scale must be >= 1; got 0$"):
        Doubler(0)
    with pytest.raises(TypeError, match=r"^Doubler: x must be a number .*; got str '2'"):
        d("2")
    assert Twice(1)("ab") == "abab"  # no check of its own


def test_a_wrong_call_names_the_class_not_a_private_function():
    with pytest.raises(TypeError, match=r"^Doubler: missing a required argument: 'scale'"):
        Doubler()
    with pytest.raises(TypeError, match=r"^Doubler: got an unexpected keyword argument 'y'"):
        Doubler(1)(1, y=2)


def test_a_class_redefined_with_a_new_argument_is_checked_by_its_own_signature():
    """A reader edits a taught class on a page and keeps the decorator: the new argument passes unchecked (with a
    warning when the class is defined), the others are still checked, never a TypeError from a private function."""
    with pytest.warns(
        UserWarning, match=r"Doubler takes mask, which its contract .* does not name"
    ):

        class Doubler2(Doubler):
            def forward(self, x, mask=None):
                return 2 * x * self.scale if mask is None else 0

        Doubler2.__name__ = "Doubler"
        attach(Doubler2, Hooks)
    assert Doubler2(1)(2, mask=True) == 0
    with pytest.raises(ValueError, match=r"^Doubler: x must be a finite number; got nan"):
        Doubler2(1)(float("nan"), mask=True)


def test_a_taught_pytorch_class_redefined_with_a_new_argument():
    torch = pytest.importorskip("torch")
    d2l = d2l_of("pytorch")
    with pytest.warns(UserWarning, match="mask"):

        @d2l.checked
        class DotProductAttention(torch.nn.Module):
            def __init__(self, dropout):
                super().__init__()

            def forward(self, queries, keys, values, valid_lens=None, mask=None):
                return torch.bmm(queries, keys.transpose(1, 2))

    q = torch.ones(2, 3, 4)
    assert DotProductAttention(0.0)(q, q, q, mask=1).shape == (2, 3, 3)
    with pytest.raises(
        TypeError, match=r"^DotProductAttention: queries must be a floating-point tensor"
    ):
        DotProductAttention(0.0)(q.long(), q, q, mask=1)


def test_nothing_declared_is_an_error():
    def triple(x):
        return 3 * x

    with pytest.raises(LookupError, match=r"no contract of 'triple' \(d2lcore.contracts.triple\)"):
        attach(triple, Hooks)


def test_a_checked_class_keeps_its_signatures():
    """Keras 3 builds a layer's config from inspect.getfullargspec(cls.__init__)."""
    assert str(inspect.signature(Doubler.__init__)) == "(self, scale)"
    assert inspect.getfullargspec(Doubler.__init__).args == ["self", "scale"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_constructor_that_passes_its_arguments_on_is_checked_by_its_parents_signature(framework):
    """PreNormTransformerEncoder and TiedTransformerDecoder take ``*args, **kwargs`` and pass them on to their
    parent's constructor: the engine binds them to the parent's parameters, every error names the subclass, and
    the signature that callers (and Keras' config) see is the parent's."""
    d2l = d2l_of(framework)
    for name, parent in (
        ("PreNormTransformerEncoder", "TransformerEncoder"),
        ("PreNormTransformerDecoder", "TransformerDecoder"),
        ("TiedTransformerDecoder", "TransformerDecoder"),
    ):
        cls = getattr(d2l, name)
        assert inspect.signature(cls.__init__) == inspect.signature(getattr(d2l, parent).__init__)
        assert inspect.getfullargspec(cls.__init__).args[:3] == [
            "self",
            "vocab_size",
            "num_hiddens",
        ]
        with pytest.raises(ValueError, match=rf"^{name}: num_heads must be >= 1; got 0$"):
            cls(10, 8, 16, 0, 1, 0.0)
        with pytest.raises(
            TypeError, match=rf"^{name}: got an unexpected keyword argument 'mask'$"
        ):
            cls(10, 8, 16, 2, 1, 0.0, mask=1)
        with pytest.raises(TypeError, match=rf"^{name}: missing a required argument: 'dropout'$"):
            cls(10, 8, 16, 2, 1)


def test_checks_run_again_after_an_error_inside_the_call():
    d = Doubler(1)
    d.scale = None
    with pytest.raises(
        TypeError, match="unsupported operand"
    ):  # an error inside the model, not a check
        d(1)
    d.scale = 1
    seen.clear()
    assert d(1) == 2 and len(seen) == 1


# --- each spec's message --------------------------------------------------------------------------------------------


class NumpyHooks(AnyFramework):
    pass


SPEC_CASES = [
    (Int(1), 0, ValueError, r"n must be >= 1; got 0"),
    (Int(), 1.5, TypeError, r"n must be an int; got float 1.5"),
    (Int(), True, TypeError, r"n must be an int; got bool"),
    (Real(minimum=0), float("nan"), ValueError, r"n must be a finite number; got nan"),
    (DROPOUT, 1.0, ValueError, r"n must be < 1; got 1.0"),
    (Bool(), "False", TypeError, r"n must be True or False; got str 'False'"),
    (Text(), 3, TypeError, r"n must be a str; got int"),
    (VocabWith("<bos>"), Vocab(["a"]), ValueError, r"n must hold the reserved tokens \['<bos>'\]"),
    (
        Floats("b 3"),
        np.zeros((2, 4), np.float32),
        ValueError,
        r"n must have shape \(b, 3\) = \(2, 3\); got shape",
    ),
    (
        Floats("b"),
        np.zeros(2, np.int32),
        TypeError,
        r"n must be a floating-point tensor; got dtype int32",
    ),
    (Floats("b"), [1.0], TypeError, r"n must be a tensor or array; got list"),
    (
        Ids("b", vocab="v"),
        np.array([0, 7]),
        ValueError,
        r"n must hold token indices 0 \.\.\. 4 \(vocab_size = 5\)",
    ),
    (Lengths("b"), np.array([1.5]), ValueError, r"n must hold whole numbers; got \[1.5\]"),
    (Lengths("b"), np.array([-1]), ValueError, r"n must be >= 0; got \[-1\]"),
    (
        Lengths("b"),
        np.array([True]),
        TypeError,
        r"n must hold lengths .*: a boolean mask is not a length",
    ),
    (
        Lengths("b", "b q"),
        np.zeros((1, 1, 1)),
        ValueError,
        r"n must have shape \(b\) or \(b, q\); got shape",
    ),
    (Fields(a=ANY, b=ANY), (1,), TypeError, r"n must be a tuple \(a, b\); got tuple of 1 entry"),
    (Fields(" (from f)", a=Int()), 3, TypeError, r"n must be a tuple \(a\) \(from f\); got int 3"),
    (Fields(a=ANY, b=Int()), (1, "x"), TypeError, r"n's b must be an int; got str 'x'"),
    (ListOf(Text(), "words"), "a b", TypeError, r"n must be a list of words; got str 'a b'"),
    (
        ListOf(Text(), "words", True),
        [],
        ValueError,
        r"n must be a non-empty list of words; got an empty",
    ),
    (ListOf(Text(), "words"), ["a", 2], TypeError, r"n\[1\] must be a str; got int 2"),
]


@pytest.mark.parametrize(("spec", "value", "error", "message"), SPEC_CASES)
def test_each_spec_says_what_was_expected_and_what_was_given(spec, value, error, message):
    call = contract.Call("f", {}, None, NumpyHooks, {"v": 5})
    with pytest.raises(error, match=message):
        spec.check(call, "n", value)


def test_any_accepts_anything():
    ANY.check(contract.Call("f", {}, None, NumpyHooks, {}), "n", object())


def test_the_contract_engine_imports_no_framework():
    import subprocess
    import sys

    code = (
        "import sys, d2lcore.contracts.engine, d2lcore.contracts;"
        "loaded = {'mxnet', 'torch', 'tensorflow', 'keras'} & set(sys.modules); assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_redefinition_warning_is_silent_for_the_package():
    """Importing d2lcore's framework modules warns about no stale contract."""
    import subprocess
    import sys

    for framework in FRAMEWORKS:
        code = f"import {MODULE_OF[framework]}"
        subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], check=True)
