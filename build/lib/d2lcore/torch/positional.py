"""Sinusoidal positional encoding in PyTorch (section 6). Vaswani et al., 2017, "Attention
is all you need"."""

import torch
from torch import nn

from d2lcore.checks import check_int, check_shapes
from d2lcore.positional import sinusoid_table


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout. ``P`` is the whole table,
    (1, max_len, num_hiddens), computed once (a buffer: ``.to(device)`` moves it)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.dropout = nn.Dropout(dropout)
        # Not a weight, and not saved: it is rebuilt from the formula
        table = torch.from_numpy(sinusoid_table(max_len, num_hiddens))
        self.register_buffer("P", table, persistent=False)

    def forward(self, X, offset=0):
        # X: (batch, steps, num_hiddens)
        steps = check_shapes(X=(X, "batch steps num_hiddens"))["steps"]
        if X.shape[-1] != self.num_hiddens:
            raise ValueError(
                f"X's last dimension must be num_hiddens = {self.num_hiddens}; "
                f"got X of shape {tuple(X.shape)}"
            )
        check_int("offset", offset, minimum=0)
        if offset + steps > self.max_len:
            raise ValueError(
                f"positions {offset} ... {offset + steps - 1} do not fit in the table of "
                f"max_len = {self.max_len} positions: raise max_len"
            )
        P = self.P[:, offset : offset + steps, :].to(dtype=X.dtype, device=X.device)
        return self.dropout(X + P)
