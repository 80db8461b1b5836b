"""The base class of d2lcore's Gluon blocks that readers call with keyword arguments (the
Transformer's blocks), which the pages name: ``from d2lcore.mxnet.blocks import HybridBlock``."""

import inspect

from mxnet.gluon import nn


class HybridBlock(nn.HybridBlock):
    """A Gluon HybridBlock that may be called with keyword arguments, as PyTorch's and
    Keras' layers may (Gluon's Block.__call__ takes positional ones only)."""

    def __call__(self, *args, **kwargs):
        if kwargs:  # bound to the positions of forward's parameters, defaults filled in
            bound = inspect.signature(self.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        return super().__call__(*args)
