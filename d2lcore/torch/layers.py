"""PyTorch layers that the book's models build on but its pages do not teach: a layer normalisation whose
width is inferred on the first call, as the MXNet and Keras layers infer theirs."""

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
