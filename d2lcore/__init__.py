"""d2lcore: the code that the book's sections teach and later sections reuse.

Pick a framework and import its module under one name::

    from d2lcore import torch as d2l        # or: mxnet, tensorflow

Each of the three modules offers the same public names with the same signatures and the same semantics; the
interface is written down once, in :mod:`d2lcore.interface`. Importing ``d2lcore`` itself imports no framework.

Framework-neutral code (plotting, timing, argument checks, conversion to NumPy) lives once, in the modules of this
package, and every framework module re-exports it.
"""

__version__ = "0.1.0"

FRAMEWORKS = ("mxnet", "pytorch", "tensorflow")
"""The frameworks, in the order the book shows them. ``pytorch`` is the module ``d2lcore.torch``."""

MODULE_OF = {
    "mxnet": "d2lcore.mxnet",
    "pytorch": "d2lcore.torch",
    "tensorflow": "d2lcore.tensorflow",
}
"""The ``d2lcore`` module that implements each framework."""
