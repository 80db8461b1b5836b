"""The Nadaraya–Watson model of Attention Pooling: Nadaraya–Watson Kernel Regression: values against NumPy,
training against a float64 computation, the same result in every framework, and the leave-one-out loss."""

import numpy as np
import pytest

from d2lcore import FRAMEWORKS
from d2lcore.convert import to_numpy
from tests.conftest import make_tensor


def nw_numpy(queries, keys, values, w):
    """The model's prediction and weights, computed directly in float64."""
    scores = -(((queries[:, None] - keys) * w) ** 2) / 2
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return (weights * values).sum(axis=1), weights


def loss_numpy(w, queries, keys, values, targets):
    return (((nw_numpy(queries, keys, values, w)[0] - targets) ** 2) / 2).sum()


def leave_one_out(x, y):
    n = len(x)
    others = ~np.eye(n, dtype=bool)
    return np.tile(x, (n, 1))[others].reshape(n, n - 1), np.tile(y, (n, 1))[others].reshape(
        n, n - 1
    )


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    x = np.sort(rng.uniform(0, 5, 30)).astype("float32")
    y = (2 * np.sin(x) + x**0.8 + rng.normal(0, 0.5, 30)).astype("float32")
    keys, values = leave_one_out(x, y)
    return x, y, keys, values


def new_net(d2l, framework):
    net = d2l.NWKernelRegression()
    if framework == "mxnet":
        net.initialize()
    return net


def w_of(net, framework):
    return float(to_numpy(net.w.data() if framework == "mxnet" else net.w)[0])


def test_forward_matches_numpy(d2l, framework, tensor, data):
    x, y, keys, values = data
    net = new_net(d2l, framework)
    y_hat = d2l.to_numpy(net(tensor(x), tensor(keys), tensor(values)))
    expected, weights = nw_numpy(x.astype(float), keys, values, 1.0)
    assert y_hat.shape == (30,)
    np.testing.assert_allclose(y_hat, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d2l.to_numpy(net.attention_weights), weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d2l.to_numpy(net.attention_weights).sum(axis=1), 1.0, rtol=1e-6)


def test_equal_keys_give_the_mean_of_values(d2l, framework, tensor):
    """When all keys are equal, every weight is 1/m and the output is the mean of the values."""
    net = new_net(d2l, framework)
    keys = np.full((2, 4), 3.0, dtype="float32")
    values = np.arange(8, dtype="float32").reshape(2, 4)
    out = d2l.to_numpy(
        net(tensor(np.array([0.0, 10.0], dtype="float32")), tensor(keys), tensor(values))
    )
    np.testing.assert_allclose(out, [1.5, 5.5], rtol=1e-6)


@pytest.mark.filterwarnings("ignore:Attempting to set identical low and high xlims")
def test_first_step_follows_the_gradient(d2l, framework, tensor, data):
    """One epoch moves w by -lr * dL/dw, with dL/dw taken by central differences in float64."""
    x, y, keys, values = data
    x64, keys64, values64, y64 = (a.astype(float) for a in (x, keys, values, y))
    eps = 1e-6
    grad = (
        loss_numpy(1 + eps, x64, keys64, values64, y64)
        - loss_numpy(1 - eps, x64, keys64, values64, y64)
    ) / (2 * eps)
    net = new_net(d2l, framework)
    losses = d2l.train_nw(
        net, tensor(x), tensor(keys), tensor(values), tensor(y), lr=0.01, num_epochs=1
    )
    assert losses[0] == pytest.approx(loss_numpy(1.0, x64, keys64, values64, y64), rel=1e-5)
    assert w_of(net, framework) == pytest.approx(1 - 0.01 * grad, rel=1e-4)


def test_all_frameworks_reach_the_same_result(data):
    import importlib

    from d2lcore import MODULE_OF

    x, y, keys, values = data
    results = {}
    for fw in FRAMEWORKS:
        d2l = importlib.import_module(MODULE_OF[fw])
        net = new_net(d2l, fw)
        t = [make_tensor(fw, a) for a in (x, keys, values, y)]
        losses = d2l.train_nw(net, *t, lr=0.5, num_epochs=5)
        results[fw] = (w_of(net, fw), losses)
    w_ref, losses_ref = results["pytorch"]
    assert w_ref != pytest.approx(1.0), "training should move w"
    for fw, (w, losses) in results.items():
        assert w == pytest.approx(w_ref, rel=1e-5), fw
        np.testing.assert_allclose(losses, losses_ref, rtol=1e-5, err_msg=fw)
    assert losses_ref[-1] < losses_ref[0]


def test_gradient_is_finite(d2l, framework, tensor, data):
    x, y, keys, values = data
    net = new_net(d2l, framework)
    d2l.train_nw(net, tensor(x), tensor(keys), tensor(values), tensor(y), lr=0.5, num_epochs=2)
    assert np.isfinite(w_of(net, framework))


def test_train_rejects_column_targets(d2l, framework, tensor, data):
    x, y, keys, values = data
    net = new_net(d2l, framework)
    with pytest.raises(
        ValueError, match=r"targets must have 1 dimension\(s\), shape \(n\); got shape \(30, 1\)"
    ):
        d2l.train_nw(net, tensor(x), tensor(keys), tensor(values), tensor(y.reshape(-1, 1)))


@pytest.mark.parametrize(
    ("queries", "keys", "values", "message"),
    [
        ((3, 1), (3, 4), (3, 4), "queries must have 1 dimension(s), shape (n); got shape (3, 1)"),
        ((3,), (2, 4), (2, 4), "keys must have shape (n m) = (3, m)"),
        ((3,), (3, 4), (3, 5), "values must have shape (n m) = (3, 4); got shape (3, 5)"),
        ((3,), (3,), (3, 4), "keys must have 2 dimension(s), shape (n, m); got shape (3,)"),
    ],
)
def test_bad_shapes_are_named(d2l, framework, tensor, queries, keys, values, message):
    net = new_net(d2l, framework)
    args = [tensor(np.zeros(s, dtype="float32")) for s in (queries, keys, values)]
    with pytest.raises(ValueError) as err:
        net(*args)
    assert message.replace("(n m)", "(n, m)") in str(err.value)


def test_loo_loss_predicts_each_point_from_the_others():
    from d2lcore.kernel_regression import loo_loss

    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 5, 7), rng.normal(size=7)
    keys, values = leave_one_out(x, y)
    for w in (0.3, 1.0, 4.0):
        assert loo_loss(x, y, w) == pytest.approx(loss_numpy(w, x, keys, values, y), rel=1e-12)
    # a very wide kernel predicts each point by the mean of the others
    others_mean = (y.sum() - y) / (len(y) - 1)
    assert loo_loss(x, y, 1e-9) == pytest.approx(0.5 * ((others_mean - y) ** 2).sum(), rel=1e-6)


def test_show_loo_minimum_finds_the_minimum_and_the_first_step():
    from d2lcore.kernel_regression import loo_loss, show_loo_minimum

    rng = np.random.default_rng(1964)
    x = np.sort(rng.uniform(0, 5, 50))
    y = 2 * np.sin(x) + x**0.8 + rng.normal(0.0, 0.5, 50)
    record = show_loo_minimum(x, y, lr=0.5)
    assert record.name == "loo" and set(record) == {"w_best", "loss_best", "slope_at_1", "w_first"}
    assert 0.5 <= record["w_best"] <= 12
    for w in (record["w_best"] - 0.05, record["w_best"] + 0.05):
        assert loo_loss(x, y, w) >= record["loss_best"] * (1 - 1e-3)
    assert record["w_first"] == pytest.approx(1 - 0.5 * record["slope_at_1"], rel=1e-3)
