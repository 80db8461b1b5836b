"""The expected outputs of the checked cells, kept with the sources.

A code cell tagged ``nbval-check-output`` has its text outputs checked by ``make nbval``. What it must print is
recorded in ``<chapter folder>/expected/<section>.<framework>.json`` (one file per page and framework, committed),
so that a single execution can be compared with a reference that this run did not produce. Each entry pairs a
checked cell's code with its outputs; a cell is matched by its code (the n-th cell with that code to the n-th
entry), so editing prose does not disturb the file, and editing a checked cell's code asks for a new recording.

Only what nbval compares is kept: streams (name and text) and the text of rich outputs; images are not compared.
After an intended change, ``make expected-outputs SECTION=<section> FRAMEWORK=<framework>`` records the outputs
of the executed notebooks again (executing only those whose cache is out of date).
"""

import json
from collections import defaultdict
from pathlib import Path

import nbformat

from booktools.paths import rel, write_if_changed

TAG = "nbval-check-output"
FOLDER = "expected"
IMAGES = ("image/png", "image/jpeg")  # nbval does not compare them either


def expected_path(source, framework):
    """Where the expected outputs of ``source``'s ``framework`` notebook are kept."""
    source = Path(source)
    return source.parent / FOLDER / f"{source.stem}.{framework}.json"


def refresh_command(source, framework):
    """The command that records a notebook's expected outputs again."""
    return f"make expected-outputs SECTION={Path(source).stem} FRAMEWORK={framework}"


def is_checked(cell):
    return cell.cell_type == "code" and TAG in cell.metadata.get("tags", [])


def _is_json(mime):
    """JSON outputs (``application/...+json``, such as d2lcore's records) are kept as their values."""
    return mime == "application/json" or mime.endswith("+json")


def _lines(text):
    return text.splitlines(keepends=True)


def comparable(outputs):
    """The outputs of a cell as they are recorded: streams and the text of rich outputs, as lists of lines."""
    kept = []
    for out in outputs:
        if out["output_type"] == "stream":
            kept.append({"output_type": "stream", "name": out["name"], "text": _lines(out["text"])})
        elif out["output_type"] in ("execute_result", "display_data"):
            data = {
                k: v if _is_json(k) else _lines(v)
                for k, v in out["data"].items()
                if k not in IMAGES
            }
            kept.append({"output_type": out["output_type"], "data": data})
    return kept


def to_outputs(recorded):
    """Recorded outputs as notebook outputs, as nbval reads a reference cell."""
    outputs = []
    for out in recorded:
        if out["output_type"] == "stream":
            outputs.append(
                nbformat.v4.new_output("stream", name=out["name"], text="".join(out["text"]))
            )
        else:
            data = {k: v if _is_json(k) else "".join(v) for k, v in out["data"].items()}
            extra = {"execution_count": 1} if out["output_type"] == "execute_result" else {}
            outputs.append(nbformat.v4.new_output(out["output_type"], data=data, **extra))
    return outputs


def record(source, framework, nb):
    """Write the checked outputs of the executed notebook ``nb``; return True if the file changed."""
    cells = [
        {"code": _lines(cell.source), "outputs": comparable(cell.outputs)}
        for cell in nb.cells
        if is_checked(cell)
    ]
    data = {"source": rel(source).as_posix(), "framework": framework, "cells": cells}
    return write_if_changed(
        expected_path(source, framework), json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    )


def load(source, framework):
    """The recorded entries of a notebook ([] where nothing is recorded yet)."""
    path = expected_path(source, framework)
    return json.loads(path.read_text(encoding="utf-8"))["cells"] if path.exists() else []


def inject(nb, source, framework):
    """Put the expected outputs into the checked cells of the split notebook ``nb`` (in place), and mark them as
    run so that nbval compares them. Return (unrecorded, stale): the checked cells that have no recorded outputs,
    and the recorded entries that match no checked cell (by their first code line)."""
    entries = defaultdict(list)
    for entry in load(source, framework):
        entries["".join(entry["code"])].append(entry)
    unrecorded = []
    for cell in nb.cells:
        if not is_checked(cell):
            continue
        if entries[cell.source]:
            cell.outputs = to_outputs(entries[cell.source].pop(0)["outputs"])
            cell.execution_count = 1
        else:
            unrecorded.append(cell)
    stale = [e for left in entries.values() for e in left]
    return unrecorded, stale


def first_line(code):
    lines = "".join(code).strip().splitlines()
    return lines[0] if lines else ""
