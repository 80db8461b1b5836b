"""Records (d2lcore.records, read back by booktools/records.py) and the record-table directive
(booktools/comparison.py): reading executed notebooks, the table, missing data, warnings and re-rendering when
a notebook changes. Small Sphinx builds in tmp_path."""

import io
import os
import re

import nbformat
import pytest
from sphinx.testing.util import SphinxTestApp

from booktools import comparison
from booktools.split import read_source
from d2lcore import FRAMEWORKS, records

BAHDANAU = "chapters/attention/bahdanau-attention"
TRANSFORMER = "chapters/attention/transformer-training"
MODELS = [("Bahdanau attention", BAHDANAU), ("Transformer", TRANSFORMER)]

SPEC = """\
page: bahdanau-attention.md | Bahdanau attention
page: transformer-training.md | Transformer
column: Epochs | {training.epochs}
column: Training time (s) | {training.seconds:,.1f}
column: Tokens/s | {training.tokens_per_second:,.0f}
column: Loss per token | {training.loss_per_token:.3f}
column: Training pairs: BLEU / exact | {bleu_training.bleu:.3f} / {bleu_training.exact:.0%}
column: Held-out: BLEU / exact | {bleu_held_out.bleu:.3f} / {bleu_held_out.exact:.0%}
devices: training.device
"""


def figures(**changes):
    values = dict(loss=0.168, speed=8221, epochs=250, seconds=83.0, device="cpu(0)")
    values.update(train_bleu=0.701, train_exact=0.61, held_bleu=0.451, held_exact=0.04)
    values.update(changes)
    return values


def record_output(name, text, **fields):
    return nbformat.v4.new_output(
        "display_data", data=records.Record(name, text, **fields)._repr_mimebundle_()
    )


def write_notebook(root, framework, docname, train=True, evaluation=True, **changes):
    """An executed notebook as the build writes it, with the records the pages display."""
    v = figures(**changes)
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_code_cell("import d2lcore")]
    if train:
        cell = nbformat.v4.new_code_cell("train_seq2seq(...)")
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stderr", text="a warning\n"),
            record_output(
                "training",
                "loss per token ...",
                epochs=v["epochs"],
                seconds=v["seconds"],
                tokens_per_second=v["speed"],
                loss_per_token=v["loss"],
                device=v["device"],
            ),
        ]
        cells.append(cell)
    if evaluation:
        cell = nbformat.v4.new_code_cell("translate_corpus(...)")
        cell.outputs = [
            record_output(
                "bleu_training",
                "training: ...",
                sentences=595,
                bleu=v["train_bleu"],
                exact=v["train_exact"],
            ),
            record_output(
                "bleu_held_out",
                "held-out: ...",
                sentences=120,
                bleu=v["held_bleu"],
                exact=v["held_exact"],
            ),
        ]
        cells.append(cell)
    nb.cells = cells
    path = root / framework / f"{docname}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# --- records ------------------------------------------------------------------------------


def test_a_record_shows_its_text_and_carries_its_fields(capsys):
    with records.collect() as shown:
        record = records.show_record("training", "loss per token 0.1", epochs=3, device="cpu")
    assert capsys.readouterr().out == "loss per token 0.1\n"  # outside a kernel: printed
    assert (
        shown == [record] and record == {"epochs": 3, "device": "cpu"} and record.name == "training"
    )
    bundle = record._repr_mimebundle_()
    assert bundle["text/plain"] == "loss per token 0.1"
    assert bundle[records.MIME] == {"name": "training", "fields": {"epochs": 3, "device": "cpu"}}


def test_a_record_keeps_the_digits_it_declares(capsys):
    """A record in a checked cell declares its precision: its floats keep that many significant digits, so that
    the last bits of a CPU's arithmetic do not reach the checked output."""
    record = records.show_record(
        "loo",
        "slope -14.29",
        digits=4,
        slope=-14.293747661540124,
        best=4.160000000000004,
        n=50,
        label="grid",
        inf=float("inf"),
    )
    other_cpu = records.show_record(
        "loo",
        "slope -14.29",
        digits=4,
        slope=-14.293748606135637,
        best=4.16,
        n=50,
        label="grid",
        inf=float("inf"),
    )
    assert (
        record
        == other_cpu
        == {"slope": -14.29, "best": 4.16, "n": 50, "label": "grid", "inf": float("inf")}
    )
    assert record._repr_mimebundle_()[records.MIME]["digits"] == 4
    assert records.show_record("t", "x", slope=-14.293747661540124)["slope"] == -14.293747661540124


def test_the_training_record_is_the_same_in_every_framework(capsys):
    with records.collect() as shown:
        record = records.show_training(
            [0.5, 0.25], tokens=1000, seconds=4.0, device="cpu", load=3.5
        )
    cores = os.cpu_count()
    assert capsys.readouterr().out == (
        "loss per token 0.250, 250 tokens/s over 2 epochs (4.0 s) on cpu\n"
    )
    assert shown == [record] and record.name == "training"
    assert record == {
        "epochs": 2,
        "seconds": 4.0,
        "tokens_per_second": 250.0,
        "loss_per_token": 0.25,
        "device": "cpu",
        "load_average": 3.5,
        "cores": cores,
    }


def test_notebook_records_reads_the_last_record_of_each_name_and_nothing_else(tmp_path):
    path = write_notebook(tmp_path, "pytorch", BAHDANAU, evaluation=False, speed=1234)
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].outputs.insert(
        0, record_output("training", "older", epochs=1)
    )  # replaced by the later one
    nb.cells[1].outputs.append(
        nbformat.v4.new_output("stream", name="stdout", text="loss per token 9.9\n")
    )
    nbformat.write(nb, path)
    found = comparison.read_records(path)
    assert found == {
        "training": {"epochs": 250, "seconds": 83.0, "tokens_per_second": 1234, "loss_per_token": 0.168,
                     "device": "cpu(0)"}
    }  # fmt: skip
    assert comparison.read_records(tmp_path / "nope.ipynb") is None
    path.write_text('{"cells": [')  # damaged: a note, not a failed build
    assert comparison.read_records(path).startswith("NotJSONError")


def test_notebook_records_reads_notebook_json_as_plain_dicts():
    from booktools.records import notebook_records

    record = {"name": "training", "fields": {"epochs": 3}}
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": "", "outputs": [{"data": {records.MIME: record}}]},
            {"cell_type": "code", "outputs": [{"output_type": "stream", "text": "x"}]},
            {"cell_type": "code", "outputs": [{"data": {records.MIME: {"fields": {}}}}]},  # no name
            {"cell_type": "code", "outputs": [{"data": {"text/plain": "3", records.MIME: record}}]},
        ]
    }
    assert notebook_records(nb) == {"training": {"epochs": 3}}
    assert notebook_records({}) == {}


def test_columns_format_records_and_show_a_dash_for_what_is_missing():
    spec = comparison.parse_spec(SPEC.splitlines())
    assert [label for _, label in spec.pages] == [label for label, _ in MODELS]
    assert spec.devices == "training.device"
    found = {
        "training": {
            "epochs": 250,
            "seconds": 43.6,
            "tokens_per_second": 15667.0,
            "loss_per_token": 0.032,
        },
        "bleu_training": {"bleu": 0.701, "exact": 0.61},
        "bleu_held_out": {"bleu": 0.437, "exact": 0.10},
    }
    assert [c.cell(found) for c in spec.columns] == [
        "250",
        "43.6",
        "15,667",
        "0.032",
        "0.701 / 61%",
        "0.437 / 10%",
    ]
    assert spec.columns[4].records == ["bleu_training"]
    assert [c.cell({}) for c in spec.columns] == [comparison.MISSING] * 6
    assert (
        spec.columns[0].cell({"training": {}}) == comparison.MISSING
    )  # a record without the field


def test_a_wrong_spec_names_its_line():
    with pytest.raises(ValueError, match="line 2: write `column: <title> | ...`"):
        comparison.parse_spec(["page: a.md | A", "column: Epochs"])
    with pytest.raises(ValueError, match="line 1: expected"):
        comparison.parse_spec(["rows: a.md"])
    with pytest.raises(ValueError, match="at least one `page:` line and one `column:` line"):
        comparison.parse_spec(["page: a.md | A"])


def test_the_transformer_page_asks_for_the_records_the_pages_display():
    """The page's table reads records that train_seq2seq and both sections' d2l.evaluate_translations show
    (tests/test_evaluation.py: under the names bleu_training and bleu_held_out)."""
    source = "chapters/attention/transformer-training.md"
    table = next(c.source for c in read_source(source).cells if "{record-table}" in c.source)
    spec = comparison.parse_spec(table.split("```{record-table}")[1].split("```")[0].splitlines())
    assert spec.pages == [
        ("bahdanau-attention.md", MODELS[0][0]),
        ("transformer-training.md", MODELS[1][0]),
    ]
    used = {name for column in spec.columns for name in column.records}
    assert used == {"training", "bleu_training", "bleu_held_out"}
    for page in ("chapters/attention/bahdanau-attention.md", source):
        code = "\n".join(c.source for c in read_source(page).cells if c.cell_type == "code")
        assert "seen, unseen = d2l.evaluate_translations(translate, tgt_vocab)" in code


# --- the directive in a Sphinx build ------------------------------------------------------


def build(src, out, language="en"):
    """Build ``src`` (an index.rst with the directive) into ``out``; return (html, warnings)."""
    app = SphinxTestApp(
        "html",
        srcdir=src,
        builddir=out,
        confoverrides={"d2l_notebooks_dir": "notebooks", "nitpicky": True, "language": language},
        status=io.StringIO(),
        warning=io.StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()  # docutils' global registries, for the next build in this process
    return (out / "html" / "chapters" / "attention" / "index.html").read_text(
        encoding="utf-8"
    ), app.warning.getvalue()


@pytest.fixture
def site(tmp_path):
    src = tmp_path / "src"
    (src / "chapters" / "attention").mkdir(parents=True)
    (src / "conf.py").write_text('extensions = ["booktools.sphinx_ext"]\n')
    (src / "index.rst").write_text("Book\n====\n\n.. toctree::\n\n   chapters/attention/index\n")
    content = "".join(f"   {line}\n" for line in SPEC.splitlines())
    page = src / "chapters" / "attention" / "index.rst"
    page.write_text(f"Comparison\n==========\n\n.. record-table::\n\n{content}")
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
    # The two sections are pages of this site too: the row labels link to them
    for docname in (BAHDANAU, TRANSFORMER):
        page = src / f"{docname}.rst"
        page.write_text(f"{docname}\n{'=' * len(docname)}\n")
    with (src / "index.rst").open("a") as index:
        index.write(f"   {BAHDANAU}\n   {TRANSFORMER}\n")
    for i, fw in enumerate(FRAMEWORKS):
        write_notebook(notebooks, fw, BAHDANAU, speed=8000 + i)
        write_notebook(notebooks, fw, TRANSFORMER, speed=20000 + i, epochs=200, loss=0.03)
    html, warnings = build(src, out)
    assert warnings == ""
    assert rows(html) == [
        [model, comparison.LABELS[fw], epochs, "83.0", speed, loss, "0.701 / 61%", "0.451 / 4%"]
        for model, epochs, base, loss in [
            ("Bahdanau attention", "250", 8000, "0.168"),
            ("Transformer", "200", 20000, "0.030"),
        ]
        for fw, speed in zip(FRAMEWORKS, (f"{base + i:,}" for i in range(3)), strict=True)
    ]
    assert "MXNet on cpu(0)" in html
    table = html[html.index("<table") : html.index("</table>")]
    assert table.count('href="bahdanau-attention.html"') == 3
    assert table.count('href="transformer-training.html"') == 3
    assert "did not display" not in html and "Not in this build" not in html


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
    assert mxnet[:2] == ["Transformer", "MXNet"]
    assert mxnet[2:] == [
        f"Not in this build: mxnet/{TRANSFORMER}.ipynb has not been executed (a partial build?)."
    ]
    assert pytorch[2:] == ["250", "83.0", "8,221", "0.168", "—", "—"]
    assert tensorflow[2:] == [
        f"tensorflow/{TRANSFORMER}.ipynb displayed none of the records training, bleu_training, bleu_held_out."
    ]
    assert 'colspan="6"' in html
    assert (
        f"Transformer, PyTorch: pytorch/{TRANSFORMER}.ipynb did not display the record(s) "
        "bleu_training, bleu_held_out." in html
    )


def test_nothing_found_warns(site):
    src, notebooks, out = site
    write_notebook(notebooks, "mxnet", BAHDANAU, train=False, evaluation=False)
    write_notebook(notebooks, "pytorch", BAHDANAU).write_text("{")  # damaged
    html, warnings = build(src, out)
    assert "record-table: no executed notebook" in warnings
    assert "make notebooks" in warnings
    table = rows(html)
    assert len(table) == 6
    assert table[1][2].startswith(f"pytorch/{BAHDANAU}.ipynb could not be read (NotJSONError")
    assert all(r[2].startswith("Not in this build") for r in table[2:])


def test_a_wrong_spec_warns(site):
    src, _, out = site
    page = src / "chapters" / "attention" / "index.rst"
    page.write_text("Comparison\n==========\n\n.. record-table::\n\n   page: a.md | A\n")
    _, warnings = build(src, out)
    assert "record-table: a record-table needs at least one `page:` line" in warnings


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
    doctree = out / "doctrees" / "chapters" / "attention" / "index.doctree"
    before = doctree.stat().st_mtime_ns
    build(src, out)
    assert doctree.stat().st_mtime_ns == before


def test_row_labels_and_column_titles_are_messages_for_translators(site):
    """The gettext builder extracts each row's label (as the link the page's markup writes, so that a
    translation keeps it) and each column's title, as it does the page's prose."""
    src, notebooks, out = site
    for docname in (BAHDANAU, TRANSFORMER):
        (src / f"{docname}.rst").write_text(f"{docname}\n{'=' * len(docname)}\n")
    with (src / "index.rst").open("a") as index:
        index.write(f"   {BAHDANAU}\n   {TRANSFORMER}\n")
    for fw in FRAMEWORKS:
        write_notebook(notebooks, fw, BAHDANAU)
        write_notebook(notebooks, fw, TRANSFORMER)
    app = SphinxTestApp(
        "gettext",
        srcdir=src,
        builddir=out,
        confoverrides={"d2l_notebooks_dir": "notebooks", "gettext_compact": False},
        status=io.StringIO(),
        warning=io.StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()
    pot = (out / "gettext" / "chapters" / "attention" / "index.pot").read_text(encoding="utf-8")
    for label, docname in (("Bahdanau attention", BAHDANAU), ("Transformer", TRANSFORMER)):
        assert f'msgid ":doc:`{label} </{docname}>`"' in pot
    assert 'msgid "Loss per token"' in pot


@pytest.mark.parametrize(
    "language, speed, loss, training",
    [("ru", "8\xa0000", "0,168", "0,701 / 61\xa0%"), ("tr", "8.000", "0,168", "0,701 / %61")],
)
def test_figures_are_written_as_the_pages_language_writes_them(
    site, language, speed, loss, training
):
    src, notebooks, out = site
    for fw in FRAMEWORKS:
        write_notebook(notebooks, fw, BAHDANAU, speed=8000)
        write_notebook(notebooks, fw, TRANSFORMER, speed=8000)
    html, warnings = build(src, out, language)
    first = rows(html)[0]
    assert first[4:7] == [speed, loss, training], first
