"""d2lcore for PyTorch: the public names of :mod:`d2lcore.interface`, with the same
signatures in every framework (tests/test_interface.py)."""

# The imports below are re-exports, listed in __all__ by interface_names():
# ruff: noqa: F401

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
