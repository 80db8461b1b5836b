"""d2lcore for TensorFlow (Keras 3). The public names and signatures are those of :mod:`d2lcore.interface`."""

# The environment is set before anything imports TensorFlow, hence imports below other code:
# ruff: noqa: E402

import os as _os

from d2lcore.frameworks import QUIET_TENSORFLOW as _QUIET

# Keep TensorFlow's C++ start-up log lines out of notebook outputs; the book sets these in its kernels too.
for _name, _value in _QUIET.items():
    _os.environ.setdefault(_name, _value)

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
    "AddNorm",
    "PositionWiseFFN",
    "TransformerDecoder",
    "TransformerDecoderBlock",
    "TransformerEncoder",
    "TransformerEncoderBlock",
]
