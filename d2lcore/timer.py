"""A wall-clock timer that records several runs."""

import time

import numpy as np


class Timer:
    """Record wall-clock times: ``start()`` and ``stop()`` bracket one run; ``stop`` returns its seconds."""

    def __init__(self):
        self.times = []
        self.start()

    def start(self):
        """Start (or restart) the clock."""
        self._tik = time.perf_counter()

    def stop(self):
        """Stop the clock, record the run and return its duration in seconds."""
        self.times.append(time.perf_counter() - self._tik)
        return self.times[-1]

    def avg(self):
        """The mean duration of the recorded runs; ValueError before the first ``stop()``."""
        if not self.times:
            raise ValueError(
                "Timer.avg needs at least one run recorded by stop(); got none: call stop() "
                "after start()"
            )
        return sum(self.times) / len(self.times)

    def sum(self):
        """The total duration of the recorded runs."""
        return sum(self.times)

    def cumsum(self):
        """The running total of the recorded durations, as a list."""
        return np.cumsum(self.times).tolist()
