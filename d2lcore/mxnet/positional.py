"""Sinusoidal positional encoding in MXNet (section 7). Vaswani et al., 2017, "Attention
is all you need"."""

from mxnet import np
from mxnet.gluon import nn

from d2lcore.checks import check_dropout, check_int, check_positions
from d2lcore.positional import sinusoid_table

from .checks import check_float


class PositionalEncoding(nn.Block):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout. ``P`` is the whole table,
    (1, max_len, num_hiddens), computed once (not a parameter)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.dropout = nn.Dropout(check_dropout(dropout))
        self.P = np.array(sinusoid_table(max_len, num_hiddens))

    def __call__(self, X, offset=0):
        # Gluon's Block.__call__ takes positional arguments only: allow offset=...
        return super().__call__(X, offset)

    def forward(self, X, offset=0):
        # X: (batch, steps, num_hiddens)
        steps = check_positions(X, self.num_hiddens, offset, self.max_len)
        check_float(X=X)
        P = self.P[:, offset : offset + steps, :].as_in_ctx(X.ctx).astype(X.dtype)
        return self.dropout(X + P)
