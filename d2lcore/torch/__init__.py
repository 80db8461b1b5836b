"""d2lcore for PyTorch. The public names and signatures are those of :mod:`d2lcore.interface`."""

# The imports below are re-exports, listed in __all__ by interface_names():
# ruff: noqa: F401

from d2lcore.common import *  # noqa: F403
from d2lcore.common import interface_names as _interface_names

from .attention import (
    AdditiveAttention,
    DotProductAttention,
    masked_softmax,
)
from .data import load_array, load_data_nmt
from .decoding import predict_seq2seq
from .encoder_decoder import AttentionDecoder, Decoder, Encoder, EncoderDecoder
from .kernel_regression import NWKernelRegression, train_nw
from .multihead import MultiHeadAttention, transpose_output, transpose_qkv
from .positional import PositionalEncoding
from .runtime import cpu, num_gpus, set_seed, try_gpu
from .seq2seq import (
    MaskedSoftmaxCELoss,
    Seq2SeqAttentionDecoder,
    Seq2SeqDecoder,
    Seq2SeqEncoder,
    sequence_mask,
)
from .tensors import checked
from .training import train_seq2seq
from .transformer import (
    AddNorm,
    PositionWiseFFN,
    TransformerDecoder,
    TransformerDecoderBlock,
    TransformerEncoder,
    TransformerEncoderBlock,
)
from .weights import export_weights, load_weights

# Exactly the names of d2lcore.interface (tests/test_interface.py checks that this module defines them all)
__all__ = _interface_names()
