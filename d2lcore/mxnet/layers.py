"""What the hybrid blocks of d2lcore's MXNet Transformer share: the base class
:class:`HybridBlock`, hybridized when built and callable with keyword arguments, and
:func:`attention_lengths`, the valid lengths as MultiHeadAttention's graph reads them."""

import inspect

from mxnet import np
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


def attention_lengths(queries, keys, valid_lens=None):
    """The valid lengths as MultiHeadAttention's graph reads them: (batch, n_q) int32, at
    most n_k (MXNet's softmax with lengths reads a larger one as garbage). queries (batch,
    n_q, d_q), keys (batch, n_k, d_k), valid_lens None (every key), or (batch,) or (batch,
    n_q) lengths, an mxnet.np array (the checks make it so)."""
    (batch, n_q), n_k = queries.shape[:2], keys.shape[1]
    if valid_lens is None:
        return np.full((batch, n_q), n_k, dtype="int32", ctx=queries.ctx)
    lens = np.minimum(valid_lens.reshape(batch, -1), n_k)  # (batch, 1 or n_q)
    return np.broadcast_to(lens, (batch, n_q)).astype("int32")
