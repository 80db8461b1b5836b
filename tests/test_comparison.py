"""The seq2seq-comparison directive: parsing executed notebooks, the table, missing data,
warnings and re-rendering when a notebook changes. Small Sphinx builds in tmp_path."""

import io
import re

import nbformat
import pytest
from sphinx.testing.util import SphinxTestApp

from booktools import comparison
from d2lcore import FRAMEWORKS

BAHDANAU, TRANSFORMER = (docname for _, docname in comparison.MODELS)

TRAIN = "loss per token {loss}, {speed} tokens/s over {epochs} epochs ({seconds} s) on {device}\n"
EVALUATION = (
    "training: 595 sentences, mean BLEU {train_bleu}, exact {train_exact}%; "
    "190 references have a word outside the vocabulary\n"
    "held-out: 120 sentences, mean BLEU {held_bleu}, exact {held_exact}%; "
    "0 references have a word outside the vocabulary\n"
)


def figures(**changes):
    values = dict(loss=0.168, speed=8221, epochs=250, seconds=83.0, device="cpu(0)")
    values.update(train_bleu=0.701, train_exact=61, held_bleu=0.451, held_exact=4)
    values.update(changes)
    return values


def write_notebook(root, framework, docname, train=True, evaluation=True, **changes):
    """An executed notebook as the build writes it, printing what the pages print."""
    values = figures(**changes)
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_code_cell("import d2lcore")]
    if train:
        cell = nbformat.v4.new_code_cell("d2l.train_seq2seq(...)")
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stderr", text="a warning\n"),
            nbformat.v4.new_output("stream", name="stdout", text=TRAIN.format(**values)),
        ]
        cells.append(cell)
    if evaluation:
        cell = nbformat.v4.new_code_cell("translate_corpus(...)")
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=EVALUATION.format(**values))
        ]
        cells.append(cell)
    nb.cells = cells
    path = root / framework / f"{docname}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# --- parsing ------------------------------------------------------------------------------


def test_parse_figures_reads_the_last_training_line_and_both_evaluation_lines():
    text = (
        TRAIN.format(**figures(loss=9.9, speed=1, epochs=1, seconds=1.0))
        + "unrelated output\n"
        + TRAIN.format(**figures(loss=0.032, speed=15667, seconds=43.6, device="cuda:0"))
        + EVALUATION.format(**figures(train_bleu=0.1, train_exact=1))
        + EVALUATION.format(**figures(held_bleu=0.437, held_exact=10))
    )
    found = comparison.parse_figures(text)
    assert found.training == {
        "loss": 0.032,
        "speed": 15667.0,
        "epochs": 250,
        "seconds": 43.6,
        "device": "cuda:0",
    }
    assert found.evaluation == {
        "training": {"sentences": 595, "bleu": 0.701, "exact": 61.0},
        "held-out": {"sentences": 120, "bleu": 0.437, "exact": 10.0},
    }
    assert found.missing_lines() == []
    assert comparison.row_cells(found) == [
        "250",
        "43.6",
        "15,667",
        "0.032",
        "0.701 / 61%",
        "0.437 / 10%",
    ]


def test_parse_figures_of_text_without_the_lines_is_empty():
    found = comparison.parse_figures("loss 0.1\nheld-out BLEU is good\n  training: many\n")
    assert found.empty
    assert len(found.missing_lines()) == 3
    assert comparison.row_cells(found) == [comparison.MISSING] * 6


def test_read_figures_reads_stdout_only_and_none_for_a_missing_notebook(tmp_path):
    path = write_notebook(tmp_path, "pytorch", BAHDANAU, evaluation=False, speed=1234)
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].outputs[0]["text"] = TRAIN.format(**figures(speed=999))  # stderr: ignored
    nbformat.write(nb, path)
    found = comparison.read_figures(path)
    assert found.training["speed"] == 1234
    assert found.evaluation == {}
    assert found.missing_lines() == [
        "the BLEU line of the training pairs",
        "the held-out BLEU line",
    ]
    assert comparison.read_figures(tmp_path / "nope.ipynb") is None
    path.write_text('{"cells": [')  # damaged: a note, not a failed build
    damaged = comparison.read_figures(path)
    assert damaged.empty and damaged.error.startswith("NotJSONError")


# --- the directive in a Sphinx build ------------------------------------------------------


def build(src, out):
    """Build ``src`` (an index.rst with the directive) into ``out``; return (html, warnings)."""
    app = SphinxTestApp(
        "html",
        srcdir=src,
        builddir=out,
        confoverrides={"d2l_notebooks_dir": "notebooks", "nitpicky": True},
        status=io.StringIO(),
        warning=io.StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()  # docutils' global registries, for the next build in this process
    return (out / "html" / "index.html").read_text(encoding="utf-8"), app.warning.getvalue()


@pytest.fixture
def site(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["booktools.sphinx_ext"]\n')
    (src / "index.rst").write_text("Comparison\n==========\n\n.. seq2seq-comparison::\n")
    return src, src / "notebooks", tmp_path / "out"


def rows(html):
    """The table's body rows as lists of cell texts (tags stripped)."""
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td.*?</td>", row, re.S)]
        for row in re.findall(r"<tr.*?</tr>", body, re.S)
    ]


def test_full_build_gives_six_rows_of_figures_and_no_warning(site):
    src, notebooks, out = site
    # The two sections are pages of this site too: the model names link to them
    for docname in (BAHDANAU, TRANSFORMER):
        page = src / f"{docname}.rst"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"{docname}\n{'=' * len(docname)}\n")
    with (src / "index.rst").open("a") as index:
        index.write(f"\n.. toctree::\n   :hidden:\n\n   {BAHDANAU}\n   {TRANSFORMER}\n")
    for i, fw in enumerate(FRAMEWORKS):
        write_notebook(notebooks, fw, BAHDANAU, speed=8000 + i)
        write_notebook(notebooks, fw, TRANSFORMER, speed=20000 + i, epochs=200, loss=0.03)
    html, warnings = build(src, out)
    assert warnings == ""
    assert rows(html) == [
        [model, comparison.LABELS[fw], epochs, "83.0", speed, loss, "0.701 / 61%", "0.451 / 4%"]
        for model, epochs, base, loss in [
            ("Bahdanau attention (section 4)", "250", 8000, "0.168"),
            ("Transformer (section 7)", "200", 20000, "0.030"),
        ]
        for fw, speed in zip(FRAMEWORKS, (f"{base + i:,}" for i in range(3)), strict=True)
    ]
    assert "MXNet on cpu(0)" in html
    table = html[html.index("<table") : html.index("</table>")]
    assert table.count(f'href="{BAHDANAU}.html"') == 3
    assert table.count(f'href="{TRANSFORMER}.html"') == 3
    assert "did not print" not in html and "Not in this build" not in html


def test_partial_build_gives_notes_instead_of_rows_and_no_warning(site):
    src, notebooks, out = site
    for fw in FRAMEWORKS:
        write_notebook(notebooks, fw, BAHDANAU)
    write_notebook(notebooks, "pytorch", TRANSFORMER, evaluation=False)
    write_notebook(notebooks, "tensorflow", TRANSFORMER, train=False, evaluation=False)
    html, warnings = build(src, out)
    assert warnings == ""
    table = rows(html)
    assert len(table) == 6
    assert [r[2:] for r in table[:3]] == [
        ["250", "83.0", "8,221", "0.168", "0.701 / 61%", "0.451 / 4%"]
    ] * 3
    mxnet, pytorch, tensorflow = table[3:]
    assert mxnet[:2] == ["Transformer (section 7)", "MXNet"]
    assert mxnet[2:] == [
        f"Not in this build: mxnet/{TRANSFORMER}.ipynb has not been executed (a partial build?)."
    ]
    assert pytorch[2:] == ["250", "83.0", "8,221", "0.168", "—", "—"]
    assert tensorflow[2:] == [
        f"tensorflow/{TRANSFORMER}.ipynb printed neither the training line nor the BLEU lines."
    ]
    assert 'colspan="6"' in html
    assert (
        f"Transformer (section 7), PyTorch: pytorch/{TRANSFORMER}.ipynb did not print the BLEU "
        "line of the training pairs or the held-out BLEU line." in html
    )


def test_nothing_found_warns(site):
    src, notebooks, out = site
    write_notebook(notebooks, "mxnet", BAHDANAU, train=False, evaluation=False)
    write_notebook(notebooks, "pytorch", BAHDANAU).write_text("{")  # damaged
    html, warnings = build(src, out)
    assert "seq2seq-comparison: no executed notebook" in warnings
    assert "make notebooks" in warnings
    table = rows(html)
    assert len(table) == 6
    assert table[1][2].startswith(f"pytorch/{BAHDANAU}.ipynb could not be read (NotJSONError")
    assert all(r[2].startswith("Not in this build") for r in table[2:])


def test_page_is_rebuilt_when_a_notebook_changes_or_appears(site):
    src, notebooks, out = site
    for fw in FRAMEWORKS:
        write_notebook(notebooks, fw, BAHDANAU)
        if fw != "tensorflow":
            write_notebook(notebooks, fw, TRANSFORMER)
    html, _ = build(src, out)
    assert "Not in this build" in html
    assert "12,345" not in html
    # Re-executed after that build: a new figure in a newer file
    write_notebook(notebooks, "pytorch", BAHDANAU, speed=12345)
    write_notebook(notebooks, "tensorflow", TRANSFORMER, speed=54321)  # appears
    html, warnings = build(src, out)
    assert warnings == ""
    assert "12,345" in html and "54,321" in html
    assert "Not in this build" not in html
    # Nothing changed: the page is not read again (its doctree keeps its time)
    doctree = out / "doctrees" / "index.doctree"
    before = doctree.stat().st_mtime_ns
    build(src, out)
    assert doctree.stat().st_mtime_ns == before
