"""export_weights / load_weights: canonical names and layouts, strictness, converters, and the same
outputs in every framework from the same weights (run with -s to see the measured differences)."""

import importlib

import numpy as np
import pytest

from d2lcore import MODULE_OF
from d2lcore.convert import to_numpy
from tests.conftest import make_tensor

RNG = np.random.default_rng(11)
Q = RNG.normal(size=(2, 4, 7)).astype(np.float32)  # (batch, queries, q)
QD = RNG.normal(size=(2, 4, 5)).astype(np.float32)  # queries of the keys' size (dot product)
K = RNG.normal(size=(2, 6, 5)).astype(np.float32)  # (batch, keys, k)
V = RNG.normal(size=(2, 6, 3)).astype(np.float32)  # (batch, keys, v)
TOKENS = RNG.integers(0, 10, size=(2, 5)).astype(np.int32)
MASKS = {"none": None, "per-example": [3, 2], "per-query": [[1, 2, 6, 4], [5, 9, 3, 0]]}


def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def built(framework, net, *arrays):
    """Put ``net`` in evaluation mode, create its parameters with one call; return that output."""
    if framework == "pytorch":
        net.eval()
    if framework == "mxnet" and not getattr(net, "_initialised", False):
        net.initialize()
        net._initialised = True
    return net(*(make_tensor(framework, a) if isinstance(a, np.ndarray) else a for a in arrays))


def nested(framework):
    """Embedding -> [dense, layer norm] (in a Sequential or list) -> layer norm: (batch, steps, 6)."""
    if framework == "pytorch":
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.blks = nn.Sequential(nn.LazyLinear(6), nn.LayerNorm(6))
                self.norm = nn.LayerNorm(6)

            def forward(self, X):
                return self.norm(self.blks(self.emb(X)))

    elif framework == "mxnet":
        from mxnet.gluon import nn

        class Net(nn.Block):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.blks = nn.Sequential()
                self.blks.add(nn.Dense(6, flatten=False), nn.LayerNorm())
                self.norm = nn.LayerNorm()

            def forward(self, X):
                return self.norm(self.blks(self.emb(X)))

    else:
        import keras

        class Net(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.emb = keras.layers.Embedding(10, 4)
                self.blks = [keras.layers.Dense(6), keras.layers.LayerNormalization(epsilon=1e-5)]
                self.norm = keras.layers.LayerNormalization(epsilon=1e-5)

            def call(self, X):
                for layer in (self.emb, *self.blks, self.norm):
                    X = layer(X)
                return X

    return Net()


NESTED_SHAPES = {
    "emb.weight": (10, 4),
    "blks.0.weight": (6, 4),
    "blks.0.bias": (6,),
    "blks.1.weight": (6,),
    "blks.1.bias": (6,),
    "norm.weight": (6,),
    "norm.bias": (6,),
}


def make(framework, kind):
    """A layer of the kind and the inputs of its calls (one per mask)."""
    d2l = module(framework)
    if kind == "nested":
        return nested(framework), [(TOKENS,)]
    if kind == "positional":
        return d2l.PositionalEncoding(5, 0.5, max_len=20), [(K,), (K, 3)]
    layer = {
        "multihead": lambda: d2l.MultiHeadAttention(12, 3, 0.5),
        "multihead-bias": lambda: d2l.MultiHeadAttention(12, 3, 0.5, bias=True),
        "additive": lambda: d2l.AdditiveAttention(8, 0.5),
        "dot-product": lambda: d2l.DotProductAttention(0.5),
    }[kind]()
    queries = QD if kind == "dot-product" else Q
    lens = [None if m is None else np.array(m, np.int32) for m in MASKS.values()]
    return layer, [(queries, K, V, m) for m in lens]


def randomise(weights):
    """The same names and shapes, random values (default initial values such as the ones of a layer
    norm's gamma would hide a swapped or transposed entry)."""
    return {n: RNG.normal(scale=0.5, size=w.shape).astype(np.float32) for n, w in weights.items()}


# --- names, layouts, round trips -----------------------------------------------------------------


def test_names_and_shapes_of_multihead_attention(d2l, framework):
    net, calls = make(framework, "multihead-bias")
    built(framework, net, *calls[0])
    weights = d2l.export_weights(net)
    assert {n: w.shape for n, w in weights.items()} == {
        **{f"W_{x}.weight": (12, n) for x, n in (("q", 7), ("k", 5), ("v", 3), ("o", 12))},
        **{f"W_{x}.bias": (12,) for x in "qkvo"},
    }
    assert all(w.dtype == np.float32 for w in weights.values())


def test_names_of_nested_layers(d2l, framework):
    net = nested(framework)
    built(framework, net, TOKENS)
    assert {n: w.shape for n, w in d2l.export_weights(net).items()} == NESTED_SHAPES


def test_dense_weight_is_out_by_in(d2l, framework, tensor):
    """y = x W^T + b with the exported W (out, in), b (out,)."""
    net, calls = make(framework, "multihead-bias")
    built(framework, net, *calls[0])
    w = d2l.export_weights(net)
    y = to_numpy(net.W_k(tensor(K)))
    np.testing.assert_allclose(y, K @ w["W_k.weight"].T + w["W_k.bias"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["multihead-bias", "additive", "nested"])
def test_round_trip(d2l, framework, kind):
    d2l.set_seed(0)
    source, calls = make(framework, kind)
    target, _ = make(framework, kind)
    built(framework, source, *calls[-1])
    built(framework, target, *calls[-1])
    weights = randomise(d2l.export_weights(source))
    d2l.load_weights(source, weights)
    d2l.load_weights(target, d2l.export_weights(source))
    exported = d2l.export_weights(target)
    assert list(exported) == list(weights)
    for name in weights:
        np.testing.assert_array_equal(exported[name], weights[name], err_msg=name)
    np.testing.assert_array_equal(
        to_numpy(built(framework, target, *calls[-1])),
        to_numpy(built(framework, source, *calls[-1])),
    )


# --- strictness and unbuilt layers ---------------------------------------------------------------


def test_load_is_strict_and_changes_nothing_when_it_fails(d2l, framework):
    net, calls = make(framework, "multihead-bias")
    built(framework, net, *calls[0])
    before = d2l.export_weights(net)
    bad = randomise(before)
    del bad["W_k.bias"]
    bad["W_x.weight"] = np.zeros((12, 7), np.float32)
    bad["W_q.weight"] = np.zeros((12, 8), np.float32)
    with pytest.raises(ValueError) as error:
        d2l.load_weights(net, bad)
    message = str(error.value)
    assert "missing ['W_k.bias']" in message
    assert "unexpected ['W_x.weight']" in message
    assert "W_q.weight: expected (12, 7), got (12, 8)" in message
    after = d2l.export_weights(net)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name])


def test_each_kind_of_mismatch_alone(d2l, framework):
    net, calls = make(framework, "multihead")
    built(framework, net, *calls[0])
    weights = d2l.export_weights(net)
    with pytest.raises(ValueError, match=r"missing \['W_o.weight'\]"):
        d2l.load_weights(net, {n: w for n, w in weights.items() if n != "W_o.weight"})
    with pytest.raises(ValueError, match=r"unexpected \['W_o.bias'\]"):
        d2l.load_weights(net, {**weights, "W_o.bias": np.zeros(12, np.float32)})
    with pytest.raises(ValueError, match=r"W_v.weight: expected \(12, 3\), got \(3, 12\)"):
        d2l.load_weights(net, {**weights, "W_v.weight": weights["W_v.weight"].T})


def test_unbuilt_layer_raises(d2l, framework):
    net = d2l.MultiHeadAttention(12, 3, 0.0)
    if framework == "mxnet":
        with pytest.raises(ValueError, match="call net.initialize()"):
            d2l.export_weights(net)
        net.initialize()  # parameters exist now, but not their shapes
    for action in (lambda: d2l.export_weights(net), lambda: d2l.load_weights(net, {})):
        with pytest.raises(ValueError, match="Call the layer once on an input first"):
            action()


def test_load_accepts_tensors_of_any_framework(d2l, framework):
    import torch

    net, calls = make(framework, "multihead")
    built(framework, net, *calls[0])
    weights = randomise(d2l.export_weights(net))
    d2l.load_weights(net, {name: torch.tensor(w) for name, w in weights.items()})
    for name, w in d2l.export_weights(net).items():
        np.testing.assert_array_equal(w, weights[name])


# --- converters ----------------------------------------------------------------------------------


def scaled_layer(framework):
    """A layer that stores its weight w (out=2, in=3) as 10 * w^T, whose converter undoes that."""
    if framework == "pytorch":
        import torch
        from torch import nn

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.stored = nn.Parameter(torch.zeros(3, 2))
                self.inner = nn.Linear(2, 2)  # a leaf's sublayers are not visited

        get, put = (lambda p: p.detach().numpy()), (lambda p, a: p.data.copy_(torch.tensor(a)))
    elif framework == "mxnet":
        from mxnet import init
        from mxnet import np as mnp
        from mxnet.gluon import nn

        class Scaled(nn.Block):
            def __init__(self):
                super().__init__()
                self.stored = self.params.get("stored", shape=(3, 2), init=init.Zero())
                self.inner = nn.Dense(2, in_units=2)

        get, put = (lambda p: p.data().asnumpy()), (lambda p, a: p.set_data(mnp.array(a)))
    else:
        import keras

        class Scaled(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.stored = self.add_weight(shape=(3, 2), initializer="zeros", name="stored")
                self.inner = keras.layers.Dense(2)
                self.inner.build((None, 2))
                self.built = True  # nothing to infer

        get, put = (lambda p: p.numpy()), (lambda p, a: p.assign(a))

    export_fn = lambda layer: {"w": get(layer.stored).T / 10}  # noqa: E731
    load_fn = lambda layer, arrays: put(layer.stored, arrays["w"].T * 10)  # noqa: E731
    return Scaled, export_fn, load_fn


def test_registered_converter(d2l, framework, monkeypatch):
    weights_module = importlib.import_module(f"{MODULE_OF[framework]}.weights")
    # register in a copy of the registry, so that the test leaves the real one as it was
    registry = weights_module.WEIGHTS
    monkeypatch.setattr(registry, "converters", dict(registry.converters))
    Scaled, export_fn, load_fn = scaled_layer(framework)
    weights_module.register_converter(Scaled, export_fn, load_fn)

    class Sub(Scaled):  # the most specific registered class in the MRO applies
        pass

    layer = Sub()
    if framework == "mxnet":
        layer.initialize()
    assert list(d2l.export_weights(layer)) == ["w"]  # not inner.weight: a leaf is not walked
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    d2l.load_weights(layer, {"w": w})
    np.testing.assert_array_equal(
        to_numpy(layer.stored.data() if framework == "mxnet" else layer.stored), 10 * w.T
    )
    np.testing.assert_array_equal(d2l.export_weights(layer)["w"], w)
    with pytest.raises(TypeError, match="layer_type must be a subclass"):
        weights_module.register_converter(int, export_fn, load_fn)


def test_keras_sequential_frozen_layers_and_non_trainable_state():
    import keras

    from d2lcore import tensorflow as d2l

    class Net(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.body = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(2)])
            self.count = self.add_weight(shape=(), initializer="zeros", trainable=False)
            self._private = keras.layers.Dense(
                2, use_bias=False
            )  # private names count, as in PyTorch
            self.scale = self.add_weight(shape=(2,), initializer="ones", name="scale")

        def call(self, X):
            return self._private(self.body(X)) * self.scale

    net = Net()
    net(np.ones((1, 4), np.float32))
    names = [
        "body.0.weight",
        "body.0.bias",
        "body.1.weight",
        "body.1.bias",
        "_private.weight",
        "scale",
    ]
    assert sorted(d2l.export_weights(net)) == sorted(names)
    net.trainable = False  # frozen weights are still weights
    assert sorted(d2l.export_weights(net)) == sorted(names)


def test_keras_unnameable_sublayer_raises():
    import keras

    from d2lcore import tensorflow as d2l

    class Hidden(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self._tracker.add_to_store("layers", keras.layers.Dense(2))  # tracked, but nameless

        def call(self, X):
            return self._layers[0](X)

    net = Hidden()
    net(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="in no attribute"):
        d2l.export_weights(net)


# --- the same function in every framework --------------------------------------------------------

KINDS = ["multihead", "multihead-bias", "additive", "dot-product", "positional", "nested"]


def outputs(framework, net, calls):
    """Outputs (and attention weights, where the layer has them) of each call, in evaluation mode."""
    results = []
    for args in calls:
        results.append(to_numpy(built(framework, net, *args)))
        if getattr(net, "attention_weights", None) is not None:
            results.append(to_numpy(net.attention_weights))
    return results


@pytest.mark.parametrize("kind", KINDS)
def test_same_outputs_in_every_framework(kind):
    """Weights made in PyTorch, loaded into MXNet and TensorFlow after one call that builds them:
    every output (with each kind of mask) and every attention weight agrees within 1e-5."""
    import torch

    torch.manual_seed(0)
    source, calls = make("pytorch", kind)
    built("pytorch", source, *calls[0])
    weights = module("pytorch").export_weights(source)
    if kind == "nested":  # a layer norm's default gamma = 1, beta = 0 would hide a swap
        weights = randomise(weights)
        module("pytorch").load_weights(source, weights)
    with torch.no_grad():
        expected = outputs("pytorch", source, calls)
    for framework in ("mxnet", "tensorflow"):
        d2l = module(framework)
        net, _ = make(framework, kind)
        built(framework, net, *calls[0])
        d2l.load_weights(net, weights)
        # what it exports is exactly what it loaded: its export is the inverse of its load
        exported = d2l.export_weights(net)
        assert list(exported) == list(weights)
        for name, w in exported.items():
            np.testing.assert_array_equal(w, weights[name], err_msg=name)
        got = outputs(framework, net, calls)
        assert len(got) == len(expected)
        diff = max(float(np.abs(g - e).max()) for g, e in zip(got, expected))
        print(f"\nmax |{framework} - pytorch| for {kind}: {diff:.3g}")
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=0, atol=1e-5)
