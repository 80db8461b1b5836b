"""How many CPU threads d2lcore gives a framework (framework-neutral).

The book's models are small. On a 2-core CPU one thread trained them as fast as two (PyTorch, the training of
Bahdanau Attention: 11.4 vs 13.6-14.4 s for 50 epochs; MXNet, those of Bahdanau Attention and The Transformer: 89
vs 100 s and 44 vs 53 s), and with two threads a training run took 10 to 40 times as long as soon as another
program kept a core busy, because the idle thread spin-waits. TensorFlow's pools do not spin as long, but its
inter-op pool runs small operations side by side, and with a busy core its training of Bahdanau Attention took 1.6
times its quiet time (94 vs 58 s); benchmarks/threads.py compares the choices.

So, when imported, ``d2lcore.torch`` and ``d2lcore.mxnet`` use one thread and ``d2lcore.tensorflow`` one intra-op
and one inter-op thread, in any Jupyter kernel, unless the reader chose: ``D2L_NUM_THREADS`` for d2lcore (threads
per operation in every framework), or the frameworks' own variables, which they then read themselves
(``OMP_NUM_THREADS``; TensorFlow: ``TF_NUM_INTRAOP_THREADS``, ``TF_NUM_INTEROP_THREADS``).
"""

import os

VARIABLE = "D2L_NUM_THREADS"
OPENMP = ("OMP_NUM_THREADS",)
TENSORFLOW = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def cpu_threads(own=OPENMP):
    """The number of CPU threads per operation for a framework: ``$D2L_NUM_THREADS`` if set, ``None`` if one of
    the framework's own variables ``own`` is set (the framework keeps the reader's choice), else 1. A value that
    is not a whole number >= 1 raises ValueError."""
    value = os.environ.get(VARIABLE)
    if value is None:
        return None if any(name in os.environ for name in own) else 1
    if not value.isdigit() or int(value) < 1:
        raise ValueError(
            f"{VARIABLE} must be a whole number of threads >= 1; got {value!r}. "
            "Unset it for d2lcore's default of 1."
        )
    return int(value)
