"""Sinusoidal positional encoding (Self-Attention and Positional Encoding): the table against its formula, the
rotation between positions, offsets, odd widths and bad input."""

import numpy as np
import pytest

from d2lcore.convert import to_numpy


def formula(max_len, num_hiddens):
    """P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(i / 10000^(2j/d)), entry by entry."""
    P = np.zeros((max_len, num_hiddens))
    for i in range(max_len):
        for col in range(num_hiddens):
            j = col // 2
            angle = i / 10000 ** (2 * j / num_hiddens)
            P[i, col] = np.sin(angle) if col % 2 == 0 else np.cos(angle)
    return P


def new_encoding(d2l, framework, *args, **kwargs):
    net = d2l.PositionalEncoding(*args, **kwargs)
    if framework == "mxnet":
        net.initialize()
    if framework == "pytorch":
        net.eval()
    return net


def table(net):
    return to_numpy(net.P)


@pytest.mark.parametrize("num_hiddens", [32, 7, 1, 2])
def test_table_matches_the_formula(d2l, framework, num_hiddens):
    P = table(new_encoding(d2l, framework, num_hiddens, 0.0, max_len=60))
    assert P.shape == (1, 60, num_hiddens) and P.dtype == np.float32
    np.testing.assert_allclose(P[0], formula(60, num_hiddens), atol=1e-7, rtol=1e-6)


def test_odd_width_has_one_more_sine_column(d2l, framework):
    """d = 5: columns sin w_0, cos w_0, sin w_1, cos w_1, sin w_2, with w_j = 1 / 10000^(2j/5)."""
    P = table(new_encoding(d2l, framework, 5, 0.0, max_len=10))[0]
    i = np.arange(10)
    w = 1 / 10000 ** (np.arange(3) * 2 / 5)
    expected = np.stack(
        [np.sin(i * w[0]), np.cos(i * w[0]), np.sin(i * w[1]), np.cos(i * w[1]), np.sin(i * w[2])],
        axis=1,
    )
    np.testing.assert_allclose(P, expected, atol=1e-7)


def test_default_max_len(d2l, framework):
    assert table(new_encoding(d2l, framework, 4, 0.0)).shape == (1, 1000, 4)


def test_rotation_between_positions(d2l, framework):
    """(p[i+delta, 2j], p[i+delta, 2j+1]) = R(delta w_j) (p[i, 2j], p[i, 2j+1]): a fixed rotation
    that depends on delta, not on i."""
    d = 32
    P = table(new_encoding(d2l, framework, d, 0.0))[0].astype(np.float64)
    for j in (0, 3, 7, 15):
        w = 1 / 10000 ** (2 * j / d)
        for delta in (1, 5, 60, 300):
            c, s = np.cos(delta * w), np.sin(delta * w)
            R = np.array([[c, s], [-s, c]])
            for i in (0, 1, 17, 250, 600):
                np.testing.assert_allclose(
                    R @ P[i, 2 * j : 2 * j + 2], P[i + delta, 2 * j : 2 * j + 2], atol=1e-5
                )


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_adds_the_table_in_evaluation_mode(d2l, framework, tensor, dropout):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 9, 6)).astype(np.float32)
    net = new_encoding(d2l, framework, 6, dropout, max_len=20)
    out = to_numpy(net(tensor(X)))
    np.testing.assert_array_equal(out, X + table(net)[:, :9])


def test_offset(d2l, framework, tensor):
    X = np.random.default_rng(1).normal(size=(2, 4, 8)).astype(np.float32)
    net = new_encoding(d2l, framework, 8, 0.0, max_len=10)
    P = table(net)
    np.testing.assert_array_equal(to_numpy(net(tensor(X), 3)), X + P[:, 3:7])
    np.testing.assert_array_equal(to_numpy(net(tensor(X), offset=6)), X + P[:, 6:10])  # last rows
    # one step at a time, as a decoder does, gives the rows of the whole sequence
    steps = [to_numpy(net(tensor(X[:, t : t + 1]), t)) for t in range(4)]
    np.testing.assert_array_equal(np.concatenate(steps, axis=1), to_numpy(net(tensor(X))))


def test_training_mode_applies_dropout_after_adding(d2l, framework, tensor):
    X = np.zeros((4, 50, 16), np.float32)
    net = new_encoding(d2l, framework, 16, 0.5, max_len=50)
    if framework == "pytorch":
        net.train()
        out = net(tensor(X))
    elif framework == "mxnet":
        from mxnet import autograd

        with autograd.record():
            out = net(tensor(X))
    else:
        out = net(tensor(X), training=True)
    out, P = to_numpy(out), np.broadcast_to(table(net)[:, :50], X.shape)
    dropped = out == 0
    assert 0.4 < dropped[P != 0].mean() < 0.6
    np.testing.assert_allclose(out[~dropped], 2 * P[~dropped], rtol=1e-6)  # kept: scaled by 2


def test_too_long_a_sequence_raises(d2l, framework, tensor):
    net = new_encoding(d2l, framework, 4, 0.0, max_len=6)
    X = tensor(np.zeros((1, 5, 4), np.float32))
    net(X, 1)  # positions 1 ... 5 fit
    with pytest.raises(ValueError, match="raise max_len"):
        net(X, 2)
    with pytest.raises(ValueError, match="raise max_len"):
        net(tensor(np.zeros((1, 7, 4), np.float32)))


def test_bad_input(d2l, framework, tensor):
    net = new_encoding(d2l, framework, 4, 0.0, max_len=6)
    with pytest.raises(
        ValueError,
        match=r"^PositionalEncoding: X must have shape .* \(num_hiddens = 4 from the layer\)",
    ):
        net(tensor(np.zeros((1, 3, 5), np.float32)))
    with pytest.raises(ValueError, match="3 dimension"):
        net(tensor(np.zeros((3, 4), np.float32)))
    with pytest.raises(ValueError, match="offset must be >= 0"):
        net(tensor(np.zeros((1, 3, 4), np.float32)), -1)
    with pytest.raises(ValueError, match="num_hiddens must be >= 1"):
        d2l.PositionalEncoding(0, 0.0)


def test_the_table_is_not_a_weight(d2l, framework, tensor):
    net = new_encoding(d2l, framework, 4, 0.0, max_len=6)
    net(tensor(np.zeros((1, 3, 4), np.float32)))
    assert d2l.export_weights(net) == {}


def test_pytorch_table_is_a_buffer_that_follows_the_module():
    import torch

    from d2lcore import torch as d2l

    net = d2l.PositionalEncoding(4, 0.0, max_len=6)
    assert "P" in dict(net.named_buffers()) and "P" not in net.state_dict()
    net.to(torch.float64)  # a dtype move stands in for a device move on a CPU-only machine
    assert net.P.dtype == torch.float64
    X = torch.zeros((1, 3, 4), dtype=torch.float64)
    assert net(X).dtype == torch.float64
