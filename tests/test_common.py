"""The framework-neutral helpers (plotting, timing, shape checks) and each framework's seeds and devices."""

import math
import time

import matplotlib
import numpy as np
import pytest

from d2lcore import convert, plotting
from d2lcore.timer import Timer

matplotlib.use("Agg")


# --- conversion -----------------------------------------------------------------------------------------------


def test_to_numpy(tensor):
    a = np.arange(6, dtype="float32").reshape(2, 3)
    out = convert.to_numpy(tensor(a))
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(convert.to_numpy([[1, 2]]), [[1, 2]])


# --- plotting -------------------------------------------------------------------------------------------------


def test_show_heatmaps_draws_each_matrix(tensor):
    m = np.random.default_rng(0).random((2, 3, 4, 5)).astype("float32")
    fig = plotting.show_heatmaps(tensor(m), xlabel="Keys", ylabel="Queries", titles=["a", "b", "c"])
    heat_axes = [ax for ax in fig.axes if ax.images]
    assert len(heat_axes) == 6
    assert len(fig.axes) == 7  # six heatmaps and a colorbar
    for k, ax in enumerate(heat_axes):
        np.testing.assert_allclose(ax.images[0].get_array(), m[k // 3, k % 3])
    assert heat_axes[3].get_xlabel() == "Keys" and heat_axes[0].get_ylabel() == "Queries"
    assert [ax.get_title() for ax in heat_axes[:3]] == ["a", "b", "c"]
    plotting.plt.close(fig)


def test_show_heatmaps_rejects_wrong_rank(tensor):
    with pytest.raises(
        ValueError,
        match=r"^show_heatmaps: matrices must have shape \(num_rows, num_cols, num_queries, num_keys\)",
    ):
        plotting.show_heatmaps(tensor(np.eye(3)), xlabel="k", ylabel="q")


def test_show_heatmaps_needs_a_title_per_column(tensor):
    with pytest.raises(ValueError, match=r"titles must name each of the 2 columns; got 1"):
        plotting.show_heatmaps(tensor(np.zeros((1, 2, 3, 3))), "k", "q", titles=["only one"])


def test_show_heatmaps_shares_one_colour_scale(tensor):
    m = np.stack([np.full((2, 2), 0.2), np.eye(2)]).reshape(1, 2, 2, 2).astype("float32")
    fig = plotting.show_heatmaps(tensor(m), "k", "q")
    limits = {ax.images[0].get_clim() for ax in fig.axes if ax.images}
    assert limits == {(0.0, 1.0)}  # a constant panel is not blank: it uses the common scale
    plotting.plt.close(fig)


def test_plot_draws_the_series(tensor):
    x = np.linspace(0, 1, 5)
    ax = plotting.plot(tensor(x), [tensor(x**2), tensor(x**3)], "x", "y", legend=["sq", "cube"])
    lines = ax.get_lines()
    assert len(lines) == 2
    np.testing.assert_allclose(lines[1].get_ydata(), x**3)
    assert ax.get_xlabel() == "x" and [t.get_text() for t in ax.get_legend().get_texts()] == [
        "sq",
        "cube",
    ]
    plotting.plt.close("all")


def test_plot_without_x_uses_indices():
    ax = plotting.plot([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [0, 1, 2])
    plotting.plt.close("all")


def test_plot_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="series 0: X has 3 points but Y has 2"):
        plotting.plot([0.0, 1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="X has 2 series but Y has 3"):
        plotting.plot([[0.0, 1.0], [0.0, 1.0]], [[1.0, 2.0]] * 3)


def test_animator_records_points():
    animator = plotting.Animator(xlabel="epoch", legend=["train", "test"])
    animator.add(1, [0.5, 0.7])
    animator.add(2, [0.25, None])
    assert animator.X == [[1.0, 2.0], [1.0]] and animator.Y == [[0.5, 0.25], [0.7]]
    assert len(animator.axes.get_lines()) == 2
    with pytest.raises(
        ValueError, match=r"this Animator draws 2 curve\(s\); add\(\) got 1 value\(s\)"
    ):
        animator.add(3, 0.1)


def test_animator_draws_only_when_asked_and_then_every_point():
    """add(..., draw=False) records without drawing; the next drawing shows every point, as if each add had
    drawn (the training loops draw only now and then)."""
    every, sometimes = plotting.Animator(xlabel="epoch"), plotting.Animator(xlabel="epoch")
    for epoch in range(1, 6):
        every.add(epoch, 1 / epoch)
        sometimes.add(epoch, 1 / epoch, draw=epoch in (2, 5))
        if epoch == 3:
            (line,) = sometimes.axes.get_lines()
            assert list(line.get_xdata()) == [1.0, 2.0]  # not redrawn since epoch 2
    drawn = [(list(a.get_xdata()), list(a.get_ydata())) for a in sometimes.axes.get_lines()]
    assert drawn == [(list(a.get_xdata()), list(a.get_ydata())) for a in every.axes.get_lines()]
    assert drawn[0][0] == [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("num_epochs", [1, 7, 10, 12, 50, 80, 95, 100, 200, 250, 1000])
def test_animator_add_epoch_draws_at_most_max_draws_times_and_last_with_every_point(
    num_epochs, monkeypatch
):
    animator = plotting.Animator(xlabel="epoch")
    drawings = []
    monkeypatch.setattr(animator, "draw", lambda: drawings.append(len(animator.X[0])))
    for epoch in range(1, num_epochs + 1):
        animator.add_epoch(epoch, num_epochs, 1 / epoch)
    step = min(10, math.ceil(num_epochs / 10))  # a short run gets about ten points too
    # the first epoch's point too
    points = sorted({1, *range(step, num_epochs + 1, step), num_epochs})
    assert animator.X[0] == [float(e) for e in points]
    assert 1 <= len(drawings) <= 10 and drawings[-1] == len(points)
    assert len(drawings) >= min(10, len(points)) // 2  # now and then, not only at the end


# --- timer ----------------------------------------------------------------------------------------------------


def test_timer():
    timer = Timer()
    time.sleep(0.01)
    first = timer.stop()
    timer.start()
    second = timer.stop()
    assert first >= 0.01 and second >= 0
    assert timer.sum() == pytest.approx(first + second)
    assert timer.avg() == pytest.approx((first + second) / 2)
    assert timer.cumsum() == pytest.approx([first, first + second])


# --- seeds and devices, per framework -------------------------------------------------------------------------


def _random(framework, d2l):
    if framework == "mxnet":
        from mxnet import np as mnp

        return d2l.to_numpy(mnp.random.uniform(size=5))
    if framework == "pytorch":
        import torch

        return torch.rand(5).numpy()
    import tensorflow as tf

    return tf.random.uniform((5,)).numpy()


def test_set_seed_makes_random_numbers_repeat(d2l, framework):
    d2l.set_seed(42)
    a, a_np = _random(framework, d2l), np.random.rand(3)
    d2l.set_seed(42)
    b, b_np = _random(framework, d2l), np.random.rand(3)
    d2l.set_seed(43)
    c = _random(framework, d2l)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a_np, b_np)
    assert not np.array_equal(a, c)


def test_set_seed_rejects_bad_seeds(d2l):
    with pytest.raises(TypeError, match="seed must be an int"):
        d2l.set_seed(1.5)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        d2l.set_seed(-3)


def test_try_gpu_returns_a_device(d2l, framework):
    device = d2l.try_gpu()
    if framework == "mxnet":
        import mxnet as mx

        assert isinstance(device, mx.Context)
        expected = mx.gpu(0) if d2l.num_gpus() else mx.cpu()
    elif framework == "pytorch":
        import torch

        assert isinstance(device, torch.device)
        expected = torch.device("cuda:0") if d2l.num_gpus() else torch.device("cpu")
    else:
        import tensorflow as tf

        assert isinstance(device, tf.config.LogicalDevice)
        assert device.device_type == ("GPU" if d2l.num_gpus() else "CPU")
        with tf.device(device.name):  # usable as the framework expects
            assert tf.ones(1).device.endswith(device.name.split("device:")[-1])
        expected = device
    assert device == expected
    assert "object at 0x" not in repr(device)


def test_try_gpu_falls_back_to_cpu(d2l):
    assert d2l.try_gpu(d2l.num_gpus()) == d2l.cpu()
    with pytest.raises(ValueError, match="i must be >= 0"):
        d2l.try_gpu(-1)


def test_plot_leaves_matplotlibs_settings_alone():
    """d2l.plot gives its figure its own size instead of changing matplotlib's default."""
    before = dict(matplotlib.rcParams)
    axes = plotting.plot([0.0, 1.0, 2.0], [[1.0, 2.0, 3.0]], "x", "y", figsize=(4.5, 1.5))
    assert tuple(axes.figure.get_size_inches()) == (4.5, 1.5)
    assert dict(matplotlib.rcParams) == before
    plotting.plt.close(axes.figure)
