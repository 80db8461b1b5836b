"""d2lcore for MXNet. The public names and signatures are those of :mod:`d2lcore.interface`.

Importing this module switches MXNet to its NumPy interface (``npx.set_np()``) and lets MXNet 1.9.1 run on
NumPy 1.24+, which removed the ``numpy.bool`` alias that MXNet still uses.
"""

# The shim comes before anything imports MXNet, hence imports below other code:
# ruff: noqa: E402

import numpy as _np

if "bool" not in vars(_np):
    _np.bool = bool  # MXNet 1.9.1 refers to numpy.bool, which NumPy 1.24 removed.

from mxnet import npx as _npx

_npx.set_np()

from d2lcore.common import *  # noqa: F403
from d2lcore.common import __all__ as _common

from .attention import AdditiveAttention, DotProductAttention, masked_softmax
from .data import load_array, load_data_nmt
from .encoder_decoder import (
    AttentionDecoder,
    Decoder,
    Encoder,
    EncoderDecoder,
)
from .kernel_regression import NWKernelRegression, train_nw
from .multihead import MultiHeadAttention, transpose_output, transpose_qkv
from .positional import PositionalEncoding
from .runtime import cpu, num_gpus, set_seed, try_gpu
from .seq2seq import (
    MaskedSoftmaxCELoss,
    Seq2SeqAttentionDecoder,
    Seq2SeqEncoder,
    sequence_mask,
)
from .training import predict_seq2seq, train_seq2seq
from .transformer import (
    AddNorm,
    PositionWiseFFN,
    TransformerDecoder,
    TransformerDecoderBlock,
    TransformerEncoder,
    TransformerEncoderBlock,
)
from .weights import export_weights, load_weights

__all__ = [
    *_common,
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
    "NWKernelRegression",
    "load_array",
    "load_data_nmt",
    "AttentionDecoder",
    "Decoder",
    "Encoder",
    "EncoderDecoder",
    "MaskedSoftmaxCELoss",
    "Seq2SeqAttentionDecoder",
    "Seq2SeqEncoder",
    "sequence_mask",
    "predict_seq2seq",
    "train_seq2seq",
    "cpu",
    "num_gpus",
    "set_seed",
    "train_nw",
    "try_gpu",
    "MultiHeadAttention",
    "PositionalEncoding",
    "transpose_output",
    "transpose_qkv",
    "export_weights",
    "load_weights",
    "PositionWiseFFN",
    "AddNorm",
    "TransformerEncoderBlock",
    "TransformerEncoder",
    "TransformerDecoderBlock",
    "TransformerDecoder",
]
