"""d2lcore for TensorFlow (Keras 3). The public names and signatures are those of :mod:`d2lcore.interface`."""

import os as _os

# Keep TensorFlow's C++ start-up log lines out of notebook outputs; the book sets these in its kernels too.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
_os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

from d2lcore.common import *  # noqa: E402, F403
from d2lcore.common import __all__ as _common  # noqa: E402

from .attention import AdditiveAttention, DotProductAttention, masked_softmax
from .data import load_array, load_data_nmt  # noqa: E402
from .encoder_decoder import (  # noqa: E402
    AttentionDecoder,
    Decoder,
    Encoder,
    EncoderDecoder,
)
from .kernel_regression import NWKernelRegression, train_nw  # noqa: E402
from .multihead import MultiHeadAttention, transpose_output, transpose_qkv  # noqa: E402
from .positional import PositionalEncoding  # noqa: E402
from .runtime import cpu, num_gpus, set_seed, try_gpu  # noqa: E402
from .seq2seq import (  # noqa: E402
    MaskedSoftmaxCELoss,
    Seq2SeqAttentionDecoder,
    Seq2SeqEncoder,
    sequence_mask,
)
from .training import predict_seq2seq, train_seq2seq  # noqa: E402
from .transformer import (  # noqa: E402
    AddNorm,
    PositionWiseFFN,
    TransformerDecoder,
    TransformerDecoderBlock,
    TransformerEncoder,
    TransformerEncoderBlock,
)
from .weights import export_weights, load_weights  # noqa: E402

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
