"""The ``seq2seq-comparison`` directive: a table comparing the book's two translation models.

A page (the Transformer section) writes::

    ```{seq2seq-comparison}
    ```

and gets one row per model and framework, Bahdanau attention (section 4) then the Transformer
(section 7), with the figures that THIS build measured: they are read from the executed
per-framework notebooks, ``<srcdir>/<d2l_notebooks_dir>/<framework>/<docname>.ipynb`` (in the
book: ``_build/notebooks/<framework>/chapters/attention/<section>.ipynb``, see
:func:`booktools.paths.notebook_path`). From each notebook's printed output it takes

- the last line printed by ``train_seq2seq``:
  ``loss per token X, N tokens/s over E epochs (S s) on DEVICE``;
- the evaluation lines of the page's ``translate_corpus`` cell:
  ``training: 595 sentences, mean BLEU 0.701, exact 61%; ...`` and ``held-out: ...``.

Missing data never fails the build. A model whose notebook is missing (not executed in this
build), or whose notebook prints none of these lines, gets a row that says so instead of
figures; a line that alone is missing shows as "—" and is named in a note below the table.
Only when no notebook gives any figure at all does the directive also log a warning (which a
strict build turns into an error): then the table is empty, which is a mistake, not a
partial build. Every notebook read (present or not) is a dependency of the page, so Sphinx
re-renders the page when one of them is executed again or appears.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from booktools.paths import LABELS
from d2lcore import FRAMEWORKS

MODELS = [
    ("Bahdanau attention (section 4)", "chapters/attention/bahdanau-attention"),
    ("Transformer (section 7)", "chapters/attention/transformer"),
]
"""(label, docname) of the compared models, in the order of the table."""

TRAINING_LINE = re.compile(
    r"loss per token (?P<loss>\d+(?:\.\d+)?), (?P<speed>\d+(?:\.\d+)?) tokens/s over "
    r"(?P<epochs>\d+) epochs \((?P<seconds>\d+(?:\.\d+)?) s\) on (?P<device>\S.*)"
)
EVALUATION_LINE = re.compile(
    r"^\s*(?P<name>training|held-out): (?P<sentences>\d+) sentences, mean BLEU "
    r"(?P<bleu>\d+(?:\.\d+)?), exact (?P<exact>\d+(?:\.\d+)?)%",
    re.MULTILINE,
)
HEADERS = [
    "Model",
    "Framework",
    "Epochs",
    "Training time (s)",
    "Tokens/s",
    "Loss per token",
    "Training pairs: BLEU / exact",
    "Held-out: BLEU / exact",
]
MISSING = "—"

logger = logging.getLogger(__name__)


@dataclass
class Figures:
    """What one executed notebook printed; None for what it did not print."""

    training: dict | None = None  # loss, speed, epochs, seconds, device
    evaluation: dict = field(default_factory=dict)  # "training"/"held-out" -> sentences, ...
    error: str | None = None  # why the notebook could not be read

    @property
    def empty(self):
        return self.training is None and not self.evaluation

    def missing_lines(self):
        """Names of the lines the notebook did not print."""
        lines = {
            "train": "the training line of train_seq2seq",
            "training": "the BLEU line of the training pairs",
            "held-out": "the held-out BLEU line",
        }
        found = {"train"} if self.training else set()
        return [text for key, text in lines.items() if key not in found | set(self.evaluation)]


def stdout_text(nb):
    """All text a notebook's code cells printed (stream outputs), in cell order."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                text = out.get("text", "")
                parts.append("".join(text) if isinstance(text, list) else text)
    return "\n".join(parts)


def parse_figures(text):
    """The figures in a notebook's printed text: the LAST training and evaluation lines."""
    figures = Figures()
    trainings = list(TRAINING_LINE.finditer(text))
    if trainings:
        m = trainings[-1]
        figures.training = {
            "loss": float(m["loss"]),
            "speed": float(m["speed"]),
            "epochs": int(m["epochs"]),
            "seconds": float(m["seconds"]),
            "device": m["device"].strip(),
        }
    for m in EVALUATION_LINE.finditer(text):  # a later line replaces an earlier one
        figures.evaluation[m["name"]] = {
            "sentences": int(m["sentences"]),
            "bleu": float(m["bleu"]),
            "exact": float(m["exact"]),
        }
    return figures


def read_figures(path):
    """Figures of the executed notebook at ``path``, or None if it does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        nb = nbformat.read(path, as_version=4)
    except (OSError, ValueError, KeyError, AttributeError) as err:  # damaged, half-written
        return Figures(error=f"{type(err).__name__}: {err}"[:200])
    return parse_figures(stdout_text(nb))


def _number(value, digits):
    return f"{value:,.{digits}f}"


def row_cells(figures):
    """The table cells after Model and Framework, as strings."""
    t = figures.training
    cells = (
        [str(t["epochs"]), _number(t["seconds"], 1), _number(t["speed"], 0), f"{t['loss']:.3f}"]
        if t
        else [MISSING] * 4
    )
    for name in ("training", "held-out"):
        e = figures.evaluation.get(name)
        cells.append(f"{e['bleu']:.3f} / {e['exact']:.0f}%" if e else MISSING)
    return cells


def _entry(text="", **attributes):
    entry = nodes.entry(**attributes)
    if text:
        entry += nodes.paragraph(text, text)
    return entry


def _note_entry(text):
    entry = nodes.entry(morecols=len(HEADERS) - 3)
    entry += nodes.paragraph("", "", nodes.emphasis(text, text))
    return entry


def comparison_table(results, notebook_label, model_node=None):
    """The table node, the notes below it, and whether any figure was found.

    ``results``: (model label, docname, framework, Figures or None) in table order;
    ``notebook_label(framework, docname)``: how a note names a notebook;
    ``model_node(model, docname)``: the node that shows a model's label (e.g. a link)."""
    model_node = model_node or (lambda model, docname: nodes.Text(model))
    table = nodes.table(classes=["d2l-comparison"])
    group = nodes.tgroup(cols=len(HEADERS))
    table += group
    for width in (24, 12, 8, 12, 10, 10, 14, 14):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    head += nodes.row("", *(_entry(h) for h in HEADERS))
    group += head
    body = nodes.tbody()
    group += body
    notes, found = [], False
    for model, docname, framework, figures in results:
        row = nodes.row("", nodes.entry("", nodes.paragraph("", "", model_node(model, docname))))
        row += _entry(LABELS[framework])
        if figures is None:
            row += _note_entry(
                f"Not in this build: {notebook_label(framework, docname)} has not been "
                "executed (a partial build?)."
            )
        elif figures.error:
            row += _note_entry(
                f"{notebook_label(framework, docname)} could not be read ({figures.error})."
            )
        elif figures.empty:
            row += _note_entry(
                f"{notebook_label(framework, docname)} printed neither the training "
                "line nor the BLEU lines."
            )
        else:
            found = True
            for text in row_cells(figures):
                row += _entry(text)
            missing = figures.missing_lines()
            if missing:
                notes.append(
                    f"{model}, {LABELS[framework]}: {notebook_label(framework, docname)} "
                    f"did not print {' or '.join(missing)}."
                )
        body += row
    return table, notes, found


class Seq2SeqComparison(SphinxDirective):
    """``seq2seq-comparison``: no arguments, no options, no content."""

    has_content = False
    required_arguments = 0
    optional_arguments = 0

    def run(self):
        root = Path(self.env.srcdir, self.config.d2l_notebooks_dir).resolve()
        results = []
        for model, docname in MODELS:
            for fw in FRAMEWORKS:
                path = root / fw / f"{docname}.ipynb"
                # A dependency even when missing: Sphinx then re-reads the page at every build
                # until the notebook exists, and whenever it is newer than the page.
                self.env.note_dependency(str(path))
                results.append((model, docname, fw, read_figures(path)))

        def label(framework, docname):
            return f"{framework}/{docname}.ipynb"

        def model_node(model, docname):  # a link to the model's section, if it is in the book
            if docname not in self.env.found_docs:
                return nodes.Text(model)
            ref = addnodes.pending_xref(
                "", refdomain="std", reftype="doc", reftarget=f"/{docname}", refexplicit=True
            )
            ref += nodes.inline(model, model)
            return ref

        table, notes, found = comparison_table(results, label, model_node)
        output = [table]
        devices = sorted(
            {
                f"{LABELS[fw]} on {f.training['device']}"
                for _, _, fw, f in results
                if f is not None and f.training
            }
        )
        text = (
            "Figures of this build of the book, read from the executed notebooks of the two "
            "sections; times and speeds depend on the machine"
            + (f" ({', '.join(devices)})." if devices else ".")
        )
        output.append(nodes.paragraph(text, text, classes=["d2l-comparison-source"]))
        for note in notes:
            output.append(nodes.paragraph(note, "", nodes.emphasis(note, note)))
        if not found:
            logger.warning(
                "seq2seq-comparison: no executed notebook under %s gave any figure; run "
                "`make notebooks` (at least SECTION=bahdanau and SECTION=transformer) first",
                root,
                location=self.get_location(),
            )
        return output


def setup(app):
    app.add_directive("seq2seq-comparison", Seq2SeqComparison)
