"""The leave-one-out loss of Nadaraya–Watson regression with a Gaussian kernel, computed
directly with NumPy, and where gradient descent on it starts and should go
(framework-neutral). Attention Pooling: Nadaraya–Watson Kernel Regression draws the loss
as a function of the kernel width w and quotes the record that show_loo_minimum shows."""

import numpy

from d2lcore.contracts.engine import checked
from d2lcore.records import show_record


@checked
def loo_loss(x, y, w):
    """L(w) = sum_i (f(x_i) - y_i)^2 / 2, where f(x_i) predicts the training point i from
    all the others: f(x_i) = sum_{j != i} softmax_j(-((x_i - x_j) w)^2 / 2) y_j.

    x, y: (n,) training inputs and labels, n >= 2; w: the kernel width (a number).
    Computed in float64; returns a float."""
    x = numpy.asarray(x, dtype=numpy.float64)
    y = numpy.asarray(y, dtype=numpy.float64)
    scores = -0.5 * ((x[:, None] - x[None, :]) * w) ** 2  # (n, n)
    numpy.fill_diagonal(scores, -numpy.inf)  # leave each point out of its own keys
    weights = numpy.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return float(0.5 * numpy.sum((weights @ y - y) ** 2))


@checked
def show_loo_minimum(x, y, lr):
    """Show and return the record "loo": where loo_loss is smallest on the grid w = 0.5,
    0.51, ..., 12 (fields ``w_best``, ``loss_best``), its slope at w = 1, where training
    starts (``slope_at_1``, a central difference), and where one gradient step of size
    ``lr`` from w = 1 lands (``w_first``); 4 significant digits.

    x, y: (n,) training inputs and labels, n >= 2; lr: the learning rate (a number >= 0)."""
    grid = numpy.arange(0.5, 12.001, 0.01)
    curve = numpy.array([loo_loss(x, y, w) for w in grid])
    w_best, loss_best = float(grid[curve.argmin()]), float(curve.min())
    slope = (loo_loss(x, y, 1 + 1e-4) - loo_loss(x, y, 1 - 1e-4)) / 2e-4
    w_first = 1 - lr * slope
    return show_record(
        "loo",
        f"L is smallest at w = {w_best:.2f} (L = {loss_best:.3f}); L'(1) = {slope:.2f}, "
        f"so the first step lands at w = {w_first:.2f}",
        digits=4,
        w_best=w_best,
        loss_best=loss_best,
        slope_at_1=slope,
        w_first=w_first,
    )
