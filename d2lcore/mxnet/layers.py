"""What the hybrid blocks of d2lcore's MXNet Transformer share: the base class
:class:`HybridBlock`, hybridized when built and callable with keyword arguments."""

import inspect

from mxnet.gluon import nn


class HybridBlock(nn.HybridBlock):
    """An ``nn.HybridBlock`` that is hybridized when it is built (each call runs as one
    cached graph, with ``static_alloc``) and that takes keyword arguments, as layers do
    in the other frameworks: Gluon's ``Block.__call__`` takes positional ones only."""

    def __init__(self):
        super().__init__()
        self.hybridize(static_alloc=True)

    def __call__(self, *args, **kwargs):
        bound = inspect.signature(self.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        return super().__call__(*bound.args)
