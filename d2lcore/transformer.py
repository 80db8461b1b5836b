"""What the Transformer's layers share in every framework (The Transformer)."""

LAYER_NORM_EPS = 1e-5
"""The epsilon of every AddNorm's layer normalisation, in every framework (PyTorch's and
MXNet's default; Keras's default, 1e-3, is overridden)."""
