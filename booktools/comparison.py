"""The ``record-table`` directive: a table of the records that executed notebooks displayed.

A page names the pages whose notebooks it reads and the columns it wants, each a format string over the records
(see :mod:`d2lcore.records`)::

    ```{record-table}
    page: bahdanau-attention.md | Bahdanau attention
    page: transformer-training.md | Transformer
    column: Epochs | {training.epochs}
    column: Loss per token | {training.loss_per_token:.3f}
    devices: training.device
    ```

Each ``page`` line (a path relative to the page, then the row label) gives one row per framework, filled from the
executed notebook ``<srcdir>/<d2l_notebooks_dir>/<framework>/<docname>.ipynb`` (in the book:
``_build/notebooks/<framework>/...``). Each ``column`` line gives a title and a :meth:`str.format` template whose
fields are ``record.field``. The optional ``devices`` line names the field that says where a row's figures were
measured, listed below the table. This module knows nothing of what the records hold.

Missing data never fails the build. A row whose notebook is missing (not executed in this build), damaged, or
holds none of the records the columns use, says so instead of figures; a cell whose records are missing shows
"—", and a note below the table names them. Only when no notebook gives any figure at all does the directive log
a warning (which a strict build turns into an error): the table is empty, which is a mistake, not a partial
build. Every notebook read (present or not) is a dependency of the page, so Sphinx re-renders the page when one
of them is executed again or appears.
"""

import posixpath
import string
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from booktools.paths import LABELS
from booktools.quotes import localised
from booktools.records import notebook_records
from d2lcore import FRAMEWORKS

MISSING = "—"

logger = logging.getLogger(__name__)
_ = get_translation("booktools")  # booktools' own words (booktools.i18n)


@dataclass
class Column:
    title: str
    template: str

    @property
    def records(self):
        """The names of the records the template reads (``{training.epochs}`` reads ``training``)."""
        names = []
        for _, field, _, _ in string.Formatter().parse(self.template):
            if field:
                name = field.split(".")[0].split("[")[0]
                if name not in names:
                    names.append(name)
        return names

    def cell(self, records):
        """The cell's text for ``records`` ({name: fields}), or MISSING if one of its records is missing."""
        if any(name not in records for name in self.records):
            return MISSING
        found = {name: SimpleNamespace(**records[name]) for name in self.records}
        try:
            return self.template.format(**found)
        except (
            AttributeError,
            ValueError,
            TypeError,
            KeyError,
        ):  # a field it lacks, or of another type
            return MISSING


@dataclass
class Spec:
    """What a record-table directive asks for: pages [(path, label)], columns, the devices field or None."""

    pages: list
    columns: list
    devices: str | None = None


def parse_spec(lines):
    """The directive's content lines -> Spec; ValueError naming the line that is wrong."""
    spec = Spec([], [])
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key in ("page", "column"):
            first, bar, second = value.partition("|")
            if not bar or not first.strip() or not second.strip():
                raise ValueError(
                    f"line {number}: write `{key}: <{'path' if key == 'page' else 'title'}> | ...`"
                )
            pair = (first.strip(), second.strip())
            if key == "page":
                spec.pages.append(pair)
            else:
                spec.columns.append(Column(*pair))
        elif key == "devices" and value:
            spec.devices = value
        else:
            raise ValueError(
                f"line {number}: expected `page: ...`, `column: ...` or `devices: ...`; got {line!r}"
            )
    if not spec.pages or not spec.columns:
        raise ValueError("a record-table needs at least one `page:` line and one `column:` line")
    return spec


def read_records(path):
    """``{name: fields}`` of the executed notebook at ``path``; None if it does not exist; a str saying why if it
    cannot be read."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return notebook_records(nbformat.read(path, as_version=4))
    except (OSError, ValueError, KeyError, AttributeError) as err:  # damaged, half-written
        return f"{type(err).__name__}: {err}"[:200]


def _field(records, dotted):
    name, _, field = dotted.partition(".")
    return records.get(name, {}).get(field)


def _entry(text="", source=None, **attributes):
    """A table cell; ``source`` ((path, line) of the page) makes its text a message for translators."""
    entry = nodes.entry(**attributes)
    if text:
        paragraph = nodes.paragraph(text, text)
        if source is not None:
            paragraph.source, paragraph.line = source
        entry += paragraph
    return entry


def table_nodes(spec, results, notebook_label, row_node=None, source=None, language=None):
    """The table node, the notes below it, and whether any figure was found.

    ``results``: (row label, docname, framework, records or None or an error str) in table order;
    ``notebook_label(framework, docname)``: how a note names a notebook;
    ``row_node(label, docname)``: the node that shows a row's label (e.g. a link);
    ``source``: (path, line) of the directive, which makes the column titles messages for translators;
    ``language``: the page's, whose way of writing figures the cells take (``3 792`` and ``0,161`` in Russian)."""
    row_node = row_node or (lambda label, docname: nodes.Text(label))
    columns = spec.columns
    used = [name for column in columns for name in column.records]
    used = list(dict.fromkeys(used))
    table = nodes.table(classes=["d2l-comparison"])
    group = nodes.tgroup(cols=2 + len(columns))
    table += group
    for width in (24, 12, *(10 for _ in columns)):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    titles = (_entry(c.title, source) for c in columns)
    head += nodes.row("", _entry(""), _entry(_("Framework")), *titles)
    group += head
    body = nodes.tbody()
    group += body
    notes, found = [], False
    for label, docname, framework, records in results:
        node = row_node(label, docname)
        paragraph = nodes.paragraph(label, "", node)
        if source is not None:  # a message for translators: the label, as a link if it is one
            paragraph.source, paragraph.line = source
            paragraph.rawsource = getattr(node, "d2l_markup", label)
        row = nodes.row("", nodes.entry("", paragraph))
        row += _entry(LABELS[framework])
        name = notebook_label(framework, docname)
        note = None
        if records is None:
            note = f"Not in this build: {name} has not been executed (a partial build?)."
        elif isinstance(records, str):
            note = f"{name} could not be read ({records})."
        elif not set(used) & set(records):
            note = f"{name} displayed none of the records {', '.join(used)}."
        if note:
            entry = nodes.entry(morecols=len(columns) - 1)
            entry += nodes.paragraph("", "", nodes.emphasis(note, note))
            row += entry
        else:
            found = True
            for column in columns:
                # Figures joined by " / ", each written as the page's language writes it
                cell = column.cell(records)
                row += _entry(" / ".join(localised(part, language) for part in cell.split(" / ")))
            missing = [n for n in used if n not in records]
            if missing:
                notes.append(
                    f"{label}, {LABELS[framework]}: {name} did not display the record(s) {', '.join(missing)}."
                )
        body += row
    return table, notes, found


class RecordTable(SphinxDirective):
    """``record-table``: the spec in the content (see the module docstring), no arguments or options."""

    has_content = True
    required_arguments = 0
    optional_arguments = 0

    def run(self):
        try:
            spec = parse_spec(self.content)
        except ValueError as err:
            logger.warning("record-table: %s", err, location=self.get_location())
            return []
        root = Path(self.env.srcdir, self.config.d2l_notebooks_dir).resolve()
        here = posixpath.dirname(self.env.docname)
        results = []
        for path, label in spec.pages:
            docname = posixpath.normpath(posixpath.join(here, posixpath.splitext(path)[0]))
            for fw in FRAMEWORKS:
                notebook = root / fw / f"{docname}.ipynb"
                # A dependency even when missing: Sphinx then re-reads the page at every build
                # until the notebook exists, and whenever it is newer than the page.
                self.env.note_dependency(str(notebook))
                results.append((label, docname, fw, read_records(notebook)))

        def notebook_label(framework, docname):
            return f"{framework}/{docname}.ipynb"

        def row_node(label, docname):  # a link to the page, if it is in the book
            if docname not in self.env.found_docs:
                return nodes.Text(label)
            ref = addnodes.pending_xref(
                "", refdomain="std", reftype="doc", reftarget=f"/{docname}", refexplicit=True
            )
            ref += nodes.inline(label, label)
            # The row's message for translators: the link as the page's markup writes one
            suffix = posixpath.splitext(str(self.env.doc2path(self.env.docname)))[1]
            if suffix == ".rst":
                ref.d2l_markup = f":doc:`{label} </{docname}>`"
            else:  # MyST: a Markdown page, or a notebook's Markdown cell
                ref.d2l_markup = f"[{label}]({posixpath.relpath(docname, here or '.')}{suffix})"
            return ref

        table, notes, found = table_nodes(
            spec, results, notebook_label, row_node, self.get_source_info(), self.config.language
        )
        output = [table]
        devices = []
        if spec.devices:
            on = _("{framework} on {device}")
            devices = sorted(
                {
                    on.format(framework=LABELS[fw], device=_field(records, spec.devices))
                    for _, _, fw, records in results
                    if isinstance(records, dict) and _field(records, spec.devices) is not None
                }
            )
        text = _(
            "Figures of this build of the book, read from the executed notebooks; times and speeds depend on the "
            "machine"
        )
        text += f" ({', '.join(devices)})." if devices else "."
        output.append(nodes.paragraph(text, text, classes=["d2l-comparison-source"]))
        for note in notes:
            output.append(nodes.paragraph(note, "", nodes.emphasis(note, note)))
        if not found:
            logger.warning(
                "record-table: no executed notebook under %s gave any figure; run `make notebooks` for the pages "
                "it names (%s) first",
                root,
                ", ".join(path for path, _ in spec.pages),
                location=self.get_location(),
            )
        return output


def setup(app):
    app.add_directive("record-table", RecordTable)
