"""Records: named, structured results (a training run's figures, a translation summary) that a notebook shows as
a line of text and that tools read back as data, never by parsing the text (framework-neutral).

In a Jupyter kernel, :func:`show_record` displays the record: the output holds the line of text (``text/plain``)
and the fields as JSON under the MIME type :data:`MIME`, so the executed notebook carries the figures themselves
(the book's tools read them back: ``booktools/records.py``). Elsewhere it prints the line. Code that runs
the book's functions itself (the benchmarks) gets the records with :func:`collect`.
"""

import contextlib
import math
import os
import sys

MIME = "application/vnd.d2lcore.record+json"
"""The MIME type of a record in a notebook's outputs: ``{"name": str, "fields": {field: value}}``."""

_collectors = []


def significant(value, digits):
    """``value`` rounded to ``digits`` significant digits if it is a float; other values unchanged."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{digits}g}")
    return value


class Record(dict):
    """The fields of a result (a dict of JSON values), with its ``name`` and the ``text`` that shows it.

    ``digits``, where given, is the precision the record declares: its float fields keep that many significant
    digits, so that a checked cell that shows the record prints the same fields on every machine (the last bits of
    a float follow the CPU's SIMD kernels). Records of training runs declare none: they are not checked."""

    def __init__(self, name, text, digits=None, **fields):
        if digits is not None:
            fields = {k: significant(v, digits) for k, v in fields.items()}
        super().__init__(fields)
        self.name, self.text, self.digits = name, text, digits

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Record({self.name!r}, {self.text!r}, **{dict(self)!r})"

    def _repr_pretty_(self, printer, cycle):
        """IPython's plain text of the record: its line, not its fields."""
        printer.text(self.text)

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"name": self.name, "fields": dict(self)}
        if self.digits is not None:
            data["digits"] = self.digits
        return {"text/plain": self.text, MIME: data}


def show_record(name, text, digits=None, **fields):
    """Show the line ``text`` as the record ``name`` with ``fields`` (JSON values: numbers, strings): displayed
    with its fields in a Jupyter kernel, printed elsewhere. ``digits``: the significant digits its float fields
    keep (see :class:`Record`); give it where a checked cell shows the record. Returns the :class:`Record`."""
    record = Record(name, text, digits, **fields)
    for found in _collectors:
        found.append(record)
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "kernel"):
        from IPython.display import display

        display(record)
    else:
        print(text)
    return record


def load_average():
    """The machine's load average over the last minute (runnable processes; ``os.getloadavg``), or None where
    the system does not report it (Windows). A time measured on a machine with a load above its number of cores
    is longer than the same run takes on it when idle."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def show_training(losses, tokens, seconds, device, load=None):
    """Show the record ``"training"`` of a finished run: ``losses`` (the loss per token of every
    epoch), ``tokens`` (target tokens seen in all), ``seconds``, ``device``, and ``load``, the
    load average when it finished (default: :func:`load_average`), with the number of CPU cores: a
    field, not in the printed line, so that a comparison of times can say how busy the machine was.
    The same line and fields in every framework. Returns the :class:`Record`."""
    speed = tokens / seconds
    load = load_average() if load is None else load
    return show_record(
        "training",
        f"loss per token {losses[-1]:.3f}, {speed:.0f} tokens/s over {len(losses)} epochs "
        f"({seconds:.1f} s) on {device}",
        epochs=len(losses),
        seconds=seconds,
        tokens_per_second=speed,
        loss_per_token=losses[-1],
        device=str(device),
        load_average=load,
        cores=os.cpu_count(),
    )


@contextlib.contextmanager
def collect():
    """``with collect() as records:`` appends every record shown in the block to the list ``records``."""
    found = []
    _collectors.append(found)
    try:
        yield found
    finally:
        _collectors.remove(found)
