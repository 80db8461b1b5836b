"""Sinusoidal positional encoding in PyTorch (Self-Attention and
Positional Encoding). Vaswani et al., 2017, "Attention
is all you need"."""

import torch
from torch import nn

from d2lcore.positional import sinusoid_table

from .tensors import checked


@checked
class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout. ``P`` is the whole table,
    (1, max_len, num_hiddens), computed once (a buffer: ``.to(device)`` moves it)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # Not a weight, and not saved: it is rebuilt from the formula
        table = torch.from_numpy(sinusoid_table(max_len, num_hiddens))
        self.register_buffer("P", table, persistent=False)

    def forward(self, X, offset=0):
        steps = X.shape[1]
        P = self.P[:, offset : offset + steps, :].to(dtype=X.dtype, device=X.device)
        return self.dropout(X + P)


__all__ = ["PositionalEncoding"]  # the names d2lcore.torch re-exports
