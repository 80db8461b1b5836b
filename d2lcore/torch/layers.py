"""PyTorch layers and operations that the book's models build on but its pages do not teach: a layer
normalisation whose width is inferred on the first call, as the MXNet and Keras layers infer theirs, a dropout
layer that draws its mask faster on a CPU, and a softmax that is faster on a CPU for the short rows of the
book's attention scores."""

import torch
from torch import nn
from torch.nn.modules.lazy import LazyModuleMixin
from torch.nn.parameter import UninitializedParameter


class LazyLayerNorm(LazyModuleMixin, nn.LayerNorm):
    """nn.LayerNorm over the last axis whose size is inferred on the first call, as
    nn.LazyLinear does for its input size. Becomes a plain nn.LayerNorm then."""

    cls_to_become = nn.LayerNorm
    weight: UninitializedParameter
    bias: UninitializedParameter

    def __init__(self, eps):
        super().__init__(0, eps=eps, elementwise_affine=False)
        self.elementwise_affine = True
        self.weight = UninitializedParameter()
        self.bias = UninitializedParameter()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.normalized_shape != (0,):
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with torch.no_grad():
                self.normalized_shape = (input.shape[-1],)
                self.weight.materialize(self.normalized_shape)
                self.bias.materialize(self.normalized_shape)
                self.reset_parameters()


class Dropout(nn.Dropout):
    """nn.Dropout(p) whose mask comes from uniform numbers: in training, each entry of X
    is kept where a uniform draw in [0, 1) is at least p (probability 1 - p), and scaled
    by 1 / (1 - p), else set to 0; in evaluation (or for p = 0), X itself. The same
    distribution as nn.Dropout's, from other random numbers: PyTorch's CPU Bernoulli
    sampler draws a double per entry, and this mask costs about 60% of the time of
    nn.Dropout's (forward and backward, 20,480 entries). X: any shape."""

    def forward(self, X):
        if not self.training or self.p == 0:
            return X
        if self.p == 1:
            return X * 0.0
        # (U >= p) / (1 - p), computed in place in the tensor of draws U
        keep = torch.rand_like(X).ge_(self.p).mul_(1 / (1 - self.p))
        return X * keep


def short_rows(X):
    """Whether ``row_softmax`` takes its own path for X: a CPU tensor of 256 rows or more
    (the last axis), each shorter than 16 entries, a vector's width."""
    n = X.shape[-1]
    return X.device.type == "cpu" and n < 16 and X.numel() >= 256 * n


def row_softmax(X):
    """torch.softmax(X, dim=-1), up to rounding; X: any shape, rows along the last axis.

    PyTorch's CPU kernel is slow for short rows (3x slower than this for 2,560 rows of 10
    keys), and the CPU is slow on numbers near float32's underflow (below about 1e-38),
    such as exp() of a masked score. For short_rows(X), this is exp(max(X - m, -30)) / sum:
    m, each row's maximum, keeps exp() from overflowing and the softmax does not depend on
    it, so no gradient flows through it (detach); the clamp keeps the numbers away from
    underflow: a weight below exp(-30) ~ 1e-13 (the largest is at least 1/16) becomes
    about 1e-13, and a masked score's too, so the layers below multiply such weights by
    the mask."""
    if short_rows(X):
        E = torch.exp((X - X.amax(dim=-1, keepdim=True).detach()).clamp(min=-30.0))
        return E / E.sum(dim=-1, keepdim=True)
    return torch.softmax(X, dim=-1)
