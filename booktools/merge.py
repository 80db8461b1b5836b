"""Merge a section's executed per-framework notebooks into the one notebook that Jupyter Book renders.

Cells come in source order. A framework's code cell keeps its framework tag; the Sphinx extension
(:mod:`booktools.sphinx_ext`) groups adjacent tagged cells into one tab-set. A shared code cell is shown once with
its output if the output is the same in every framework; otherwise its code is shown once, without output, and
its outputs follow as one tagged copy per framework with the input removed (tag ``remove-input``), which the
extension groups into a tab-set of outputs; a hidden cell (``hide-cell``, the code of a solution) stays one tagged
copy per framework. Runs of tagged markdown cells become a ``{tab-set}`` directive here, since myst-nb drops the tags of
markdown cells. Records (:mod:`d2lcore.records`) keep only their line of text: their fields are for tools that
read the executed notebooks, and the book's renderer would warn about their MIME type.

Images become numbered figures with captions, and code cells that draw one get its caption, name and alt text
from their metadata (:mod:`booktools.figures`).

Prose quotes figures through record roles, which the merge checks against the executed notebooks and leaves for
the site to fill in (:mod:`booktools.record_role`); a figure typed into prose that no output shows stops the merge
(:mod:`booktools.quotes`).
"""

import copy
from pathlib import Path

import nbformat

from booktools.cells import frameworks_of, is_shared
from booktools.figures import (
    FigureError,
    check_figure_cell,
    figure_directives,
    figure_options,
    with_figure,
)
from booktools.links import rewrite_links
from booktools.paths import LABELS, notebook_path
from booktools.quotes import QuoteError, code_figures, fill, stray_figures
from booktools.records import notebook_records
from booktools.split import read_source
from d2lcore import FRAMEWORKS
from d2lcore.records import MIME as RECORD_MIME


def _normalised(outputs):
    """Outputs without what differs between equal runs (execution counts, transient display ids)."""
    result = []
    for out in outputs:
        out = {k: v for k, v in out.items() if k not in ("execution_count", "transient")}
        result.append(out)
    return result


def _without_records(cell):
    """The cell with the record data of its outputs removed (their text/plain line stays)."""
    for out in cell.get("outputs", []):
        out.get("data", {}).pop(RECORD_MIME, None)
    return cell


def _tagged(cell, framework):
    cell = copy.deepcopy(cell)
    tags = [t for t in cell.metadata.get("tags", []) if t not in FRAMEWORKS]
    cell.metadata["tags"] = [framework, *tags]
    return cell


HIDDEN = "hide-cell"
OUTPUT_ONLY = "remove-input"
"""The tag of a framework's copy of a shared cell that shows only its output (myst-nb's own tag)."""


def _output_only(cell):
    cell.metadata["tags"] = [*cell.metadata["tags"], OUTPUT_ONLY]
    return cell


def _prose_tabs(cells):
    """One markdown cell holding a tab-set with each framework's prose."""
    parts = ["::::{tab-set}", ":sync-group: framework", ""]
    for fw in FRAMEWORKS:
        texts = [c.source for c in cells if fw in frameworks_of(c)]
        body = "\n\n".join(texts) if texts else f"*Nothing specific to {LABELS[fw]} here.*"
        parts += [f":::{{tab-item}} {LABELS[fw]}", f":sync: {fw}", "", body, ":::", ""]
    parts.append("::::")
    return nbformat.v4.new_markdown_cell("\n".join(parts))


def _check_quotes(cell, source, notebooks, records, allowed):
    """QuoteError if the markdown cell quotes a figure that the outputs of its frameworks' notebooks do not
    show, or a record role that they cannot fill in. The roles stay: the site fills them in
    (:mod:`booktools.record_role`)."""
    frameworks = frameworks_of(cell)
    where = f"{source}, cell {cell.id}"
    problems = stray_figures(cell.source, {fw: notebooks[fw] for fw in frameworks}, allowed)
    if problems:
        raise QuoteError(f"{where}: " + "; ".join(problems))
    fill(cell.source, records, frameworks, where)


def _add_figure(cells, start, source_cell, figures, where):
    """Give ``cells[start:]``, the merged copies of ``source_cell``, its figure's caption, name and alt text.
    ``figures`` maps each figure name of the page to the index of its first copy: a later cell may show the same
    figure only as another framework's copy in the same tab-set."""
    check_figure_cell(source_cell, where)
    if not figure_options(source_cell):
        return
    name = figure_options(source_cell)["name"]
    for i in range(start, len(cells)):
        first = figures.setdefault(name, i)
        if first != i and any(is_shared(c) for c in cells[first : i + 1]):
            raise FigureError(f"{where}: the figure name {name!r} is used twice on the page")
        cells[i] = with_figure(cells[i], source_cell, first_copy=first == i)


def _read_executed(source):
    notebooks = {}
    for fw in FRAMEWORKS:
        path = notebook_path(source, fw)
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: run `make notebooks` first")
        notebooks[fw] = nbformat.read(path, as_version=4)
    return notebooks


def merge(source, notebooks=None):
    """The merged notebook of ``source``, from its executed per-framework notebooks (read from
    _build/notebooks unless given as a dict framework -> notebook)."""
    src = read_source(source)
    notebooks = notebooks or _read_executed(source)
    executed = {fw: {c["id"]: c for c in notebooks[fw].cells} for fw in FRAMEWORKS}
    out = nbformat.v4.new_notebook()
    out.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
    }
    records = {fw: notebook_records(notebooks[fw]) for fw in FRAMEWORKS}
    allowed = set(src.metadata.get("d2l", {}).get("not_outputs", [])) | code_figures(src)
    prose = []
    figures = {}  # figure name -> index in out.cells of its first copy
    for cell in src.cells:
        where = f"{source}, cell {cell.id}"
        if cell.cell_type == "markdown":
            _check_quotes(cell, source, notebooks, records, allowed)
            cell.source = figure_directives(cell.source, where)
        if cell.cell_type == "markdown" and not is_shared(cell):
            cell.source = rewrite_links(cell.source, Path(source).parent)
            prose.append(cell)
            continue
        if prose:
            out.cells.append(_prose_tabs(prose))
            prose = []
        if cell.cell_type != "code":
            cell.source = rewrite_links(cell.source, Path(source).parent)
            out.cells.append(cell)
            continue
        runs = {fw: executed[fw][cell.id] for fw in frameworks_of(cell)}
        start = len(out.cells)
        outputs = [_normalised(runs[fw].outputs) for fw in runs]
        if is_shared(cell) and all(o == outputs[0] for o in outputs):
            out.cells.append(copy.deepcopy(runs[FRAMEWORKS[0]]))
        elif is_shared(cell) and HIDDEN not in cell.metadata.get("tags", []):
            # the same code: once, then each framework's output (a hidden cell, a solution's code, keeps one
            # closed copy per framework: two toggles, one for the code and one for the outputs, would be taller)
            code = copy.deepcopy(runs[FRAMEWORKS[0]])
            code.outputs = []
            out.cells.append(code)
            start = len(out.cells)
            out.cells.extend(_output_only(_tagged(runs[fw], fw)) for fw in FRAMEWORKS)
        else:
            out.cells.extend(_tagged(runs[fw], fw) for fw in FRAMEWORKS if fw in runs)
        _add_figure(out.cells, start, cell, figures, where)
    if prose:
        out.cells.append(_prose_tabs(prose))
    for i, cell in enumerate(out.cells):
        cell["id"] = f"m{i:03d}"
        _without_records(cell)
    nbformat.validate(out)
    return out
