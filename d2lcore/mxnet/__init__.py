"""d2lcore for MXNet. The public names and signatures are those of :mod:`d2lcore.interface`.

Importing this module switches MXNet to its NumPy interface (``npx.set_np()``) and lets MXNet 1.9.1 run on
NumPy 1.24+, which removed the ``numpy.bool`` alias that MXNet still uses.
"""

import numpy as _np

if int(_np.__version__.split(".")[0]) >= 2:
    raise ImportError(
        f"MXNet 1.9.1 needs NumPy 1.x, but NumPy {_np.__version__} is installed. Install the MXNet extra, which "
        'brings a NumPy it can use: pip install "d2lcore[mxnet]" (or pip install "numpy<2"), then restart '
        "Python (in a notebook, restart the kernel)."
    )
if "bool" not in vars(_np):
    _np.bool = bool  # MXNet 1.9.1 refers to numpy.bool, which NumPy 1.24 removed.

from mxnet import npx as _npx  # noqa: E402

_npx.set_np()

from d2lcore.common import *  # noqa: E402, F403
from d2lcore.common import __all__ as _common  # noqa: E402

from .attention import AdditiveAttention, DotProductAttention, masked_softmax  # noqa: E402
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
    "PositionWiseFFN",
    "AddNorm",
    "TransformerEncoderBlock",
    "TransformerEncoder",
    "TransformerDecoderBlock",
    "TransformerDecoder",
]
