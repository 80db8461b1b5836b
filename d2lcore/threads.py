"""How many CPU threads d2lcore gives a framework (framework-neutral).

The book's models are small. On a 2-core CPU one thread trained them as fast as two (PyTorch, section 4: 11.4 vs
13.6-14.4 s for 50 epochs; MXNet, sections 4 and 7: 89 vs 100 s and 44 vs 53 s), and with two threads a training
run took 10 to 40 times as long as soon as another program kept a core busy, because the idle thread spin-waits.
So ``d2lcore.torch`` and ``d2lcore.mxnet`` use one thread unless the reader chose: ``D2L_NUM_THREADS`` for d2lcore
alone, or ``OMP_NUM_THREADS``, which the frameworks read themselves.
"""

import os

VARIABLE = "D2L_NUM_THREADS"


def cpu_threads():
    """The number of CPU threads for a framework: ``$D2L_NUM_THREADS`` if set, ``None`` if only
    ``$OMP_NUM_THREADS`` is set (the framework keeps the reader's choice), else 1. A value that is
    not a whole number >= 1 raises ValueError."""
    value = os.environ.get(VARIABLE)
    if value is None:
        return None if "OMP_NUM_THREADS" in os.environ else 1
    if not value.isdigit() or int(value) < 1:
        raise ValueError(
            f"{VARIABLE} must be a whole number of threads >= 1; got {value!r}. "
            "Unset it for d2lcore's default of 1."
        )
    return int(value)
