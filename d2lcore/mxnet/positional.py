"""Sinusoidal positional encoding in MXNet (Self-Attention and
Positional Encoding). Vaswani et al., 2017, "Attention
is all you need"."""

from mxnet import np
from mxnet.gluon import nn

from d2lcore.positional import sinusoid_table

from .tensors import checked


@checked
class PositionalEncoding(nn.Block):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout. ``P`` is the whole table,
    (1, max_len, num_hiddens), computed once (not a parameter)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = np.array(sinusoid_table(max_len, num_hiddens))

    def __call__(self, X, offset=0):
        # Gluon's Block.__call__ takes positional arguments only: allow offset=...
        return super().__call__(X, offset)

    def forward(self, X, offset=0):
        steps = X.shape[1]
        P = self.P[:, offset : offset + steps, :].as_in_ctx(X.ctx).astype(X.dtype)
        return self.dropout(X + P)


__all__ = ["PositionalEncoding"]  # the names d2lcore.mxnet re-exports
