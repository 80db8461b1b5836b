"""d2lcore: the code that the book's sections teach and later sections reuse.

Pick a framework and import its module under one name::

    from d2lcore import torch as d2l        # or: mxnet, tensorflow

Each of the three modules offers the same public names with the same signatures and the same semantics; the
names are listed once, in :mod:`d2lcore.interface`, and each signature is written only in its code. Importing
``d2lcore`` itself imports no framework.

Framework-neutral code (plotting, timing, argument checks, conversion to NumPy) lives once, in the modules of this
package, and every framework module re-exports it.
"""

__version__ = "0.1.0"

from d2lcore.frameworks import FRAMEWORKS as FRAMEWORKS
from d2lcore.frameworks import REGISTRY

MODULE_OF = {fw.name: fw.module for fw in REGISTRY.values()}
"""The ``d2lcore`` module that implements each framework (``pytorch`` is ``d2lcore.torch``)."""
