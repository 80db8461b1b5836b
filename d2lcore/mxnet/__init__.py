"""d2lcore for MXNet: the public names of :mod:`d2lcore.interface`, with the same
signatures in every framework (tests/test_interface.py).

Importing this module switches MXNet to its NumPy interface (``npx.set_np()``), lets MXNet 1.9.1 run on
NumPy 1.24+, which removed the ``numpy.bool`` alias that MXNet still uses, and gives MXNet one OpenMP thread
unless the reader chose (:mod:`d2lcore.threads`): import it before MXNet.
"""

# The shim comes before anything imports MXNet, hence imports below other code:
# The imports below are re-exports, listed in __all__ by interface_names():
# ruff: noqa: E402, F401

import numpy as _np

if int(_np.__version__.split(".")[0]) >= 2:
    raise ImportError(
        f"MXNet 1.9.1 needs NumPy 1.x, but NumPy {_np.__version__} is installed. Install the MXNet extra, which "
        'brings a NumPy it can use: pip install "d2lcore[mxnet]" (or pip install "numpy<2"), then restart '
        "Python (in a notebook, restart the kernel)."
    )
if "bool" not in vars(_np):
    _np.bool = bool  # MXNet 1.9.1 refers to numpy.bool, which NumPy 1.24 removed.

import os as _os

from d2lcore.threads import cpu_threads as _cpu_threads

# One OpenMP thread unless the reader chose (see d2lcore.threads); MXNet reads it when it loads. A value the reader
# set is never overwritten, not even by D2L_NUM_THREADS.
if (_threads := _cpu_threads()) is not None:
    _os.environ.setdefault("OMP_NUM_THREADS", str(_threads))

from mxnet import npx as _npx

_npx.set_np()

from d2lcore.common import *  # noqa: F403
from d2lcore.common import interface_names as _interface_names

from .attention import *  # noqa: F403
from .data import *  # noqa: F403
from .decoding import *  # noqa: F403
from .efficient import *  # noqa: F403
from .encoder_decoder import *  # noqa: F403
from .kernel_regression import *  # noqa: F403
from .language_model import *  # noqa: F403
from .multihead import *  # noqa: F403
from .positional import *  # noqa: F403
from .prenorm import *  # noqa: F403
from .runtime import *  # noqa: F403
from .schedules import *  # noqa: F403
from .seq2seq import *  # noqa: F403
from .tensors import checked
from .training import *  # noqa: F403
from .transformer import *  # noqa: F403
from .tying import *  # noqa: F403
from .weights import *  # noqa: F403

# Exactly the names of d2lcore.interface (tests/test_interface.py checks that this module defines them all)
__all__ = _interface_names()
