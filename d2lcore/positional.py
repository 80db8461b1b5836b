"""The sinusoidal position table of Self-Attention and Positional Encoding, computed once with NumPy for every
framework (framework-neutral). Vaswani et al., 2017, "Attention is all you need"."""

import numpy


def sinusoid_table(max_len, num_hiddens):
    """(1, max_len, num_hiddens) float32: column 2j holds sin(i w_j), column 2j + 1 holds
    cos(i w_j) for position i, with w_j = 1 / 10000^(2j / num_hiddens)."""
    positions = numpy.arange(max_len, dtype=numpy.float64)[:, None]  # (max_len, 1)
    # 2j = 0, 2, 4, ...: one frequency per even column (ceil(num_hiddens / 2) of them)
    freqs = 1.0 / 10000 ** (numpy.arange(0, num_hiddens, 2) / num_hiddens)
    angles = positions * freqs  # (max_len, ceil(num_hiddens / 2))
    P = numpy.zeros((1, max_len, num_hiddens), dtype=numpy.float32)
    P[0, :, 0::2] = numpy.sin(angles)
    P[0, :, 1::2] = numpy.cos(angles[:, : num_hiddens // 2])  # odd: one cos fewer
    return P
