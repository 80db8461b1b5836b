"""Prose bound to outputs (booktools.quotes): record roles are filled from the executed notebooks, and a figure
typed into prose that the outputs do not show stops the merge."""

import nbformat
import pytest

from booktools import merge as merge_module
from booktools.merge import merge
from booktools.quotes import QuoteError, fill, fill_notebook, localised, quoted, stray_figures
from d2lcore import FRAMEWORKS
from d2lcore.records import MIME

BLEU = {"mxnet": 0.3561, "pytorch": 0.3649, "tensorflow": 0.4512}


def executed(framework, source_nb, bleu=None, printed=""):
    """A framework notebook of ``source_nb`` as if executed: every code cell printed ``printed`` and, if
    ``bleu`` is given, displayed the record bleu_held_out."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["d2l"] = {"framework": framework}
    for cell in source_nb.cells:
        cell = nbformat.from_dict(dict(cell))
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
            if bleu is not None:
                data = {"text/plain": f"held-out: mean BLEU {bleu:.3f}"}
                data[MIME] = {"name": "bleu_held_out", "fields": {"bleu": bleu, "sentences": 120}}
                cell.outputs.append(nbformat.v4.new_output("display_data", data=data))
        nb.cells.append(cell)
    return nb


def records(values):
    return {fw: {"bleu_held_out": {"bleu": v, "sentences": 120}} for fw, v in values.items()}


def test_framework_prose_gets_its_value():
    text = "The mean BLEU is {record}`bleu_held_out.bleu:.2f`."
    assert fill(text, records(BLEU), ["pytorch"]) == "The mean BLEU is 0.36."
    assert fill(text, records(BLEU), ["tensorflow"]) == "The mean BLEU is 0.45."


def test_shared_prose_gets_each_frameworks_value_or_one_if_they_agree():
    text = "BLEU {record}`bleu_held_out.bleu:.2f` on {record}`bleu_held_out.sentences` sentences"
    assert fill(text, records(BLEU)) == (
        "BLEU 0.36 (MXNet), 0.36 (PyTorch), 0.45 (TensorFlow) on 120 sentences"
    )
    same = dict.fromkeys(FRAMEWORKS, 0.5)
    assert fill(text, records(same)) == "BLEU 0.50 on 120 sentences"


def test_on_the_page_differing_values_carry_each_frameworks_value_for_the_script():
    """The merged page's shared prose: the script shows the selected framework's value; without it, all three."""
    text = "BLEU {record}`bleu_held_out.bleu:.2f` on {record}`bleu_held_out.sentences` sentences"
    assert fill(text, records(BLEU), html=True) == (
        'BLEU <span class="d2l-per-framework" data-mxnet="0.36" data-pytorch="0.36" data-tensorflow="0.45">'
        "0.36 (MXNet), 0.36 (PyTorch), 0.45 (TensorFlow)</span> on 120 sentences"
    )
    assert fill(text, records(BLEU), ["pytorch"], html=True) == "BLEU 0.36 on 120 sentences"


@pytest.mark.parametrize(
    "role, message",
    [
        ("{record}`bleu_training.bleu`", "displayed no record 'bleu_training'"),
        ("{record}`bleu_held_out.exact`", "has no field 'exact'"),
        ("{record}`bleu_held_out.bleu:d`", "cannot format"),
    ],
)
def test_a_role_without_its_figure_is_an_error(role, message):
    with pytest.raises(QuoteError, match=message):
        fill(f"see {role}", records(BLEU))


def test_the_downloaded_notebook_reads_as_plain_markdown():
    source = nbformat.v4.new_notebook()
    source.cells = [
        nbformat.v4.new_code_cell("print(1)"),
        nbformat.v4.new_markdown_cell("Held out: {record}`bleu_held_out.bleu:.3f`."),
    ]
    nb = fill_notebook(executed("mxnet", source, bleu=BLEU["mxnet"]))
    assert nb.cells[1].source == "Held out: 0.356."
    nb = fill_notebook(executed("mxnet", source, bleu=BLEU["mxnet"]), language="ru")
    assert nb.cells[1].source == "Held out: 0,356."


@pytest.mark.parametrize(
    "language, value, written",
    [
        (None, "0.36", "0.36"),
        ("ru", "0.36", "0,36"),
        ("tr", "46%", "%46"),
        ("tr", "4.5%", "%4,5"),
        ("ru", "46%", "46\u00a0%"),
        ("ru", "37,120", "37\u00a0120"),
        ("tr", "1,234.5", "1.234,5"),
        ("zh_CN", "37,120", "37,120"),
        ("zh_CN", "0.36", "0.36"),
        ("zh_CN", "46%", "46%"),
    ],
)
def test_figures_are_written_as_the_language_writes_them(language, value, written):
    assert localised(value, language) == written


def test_typed_figures_and_translations_are_found_outside_math_and_code():
    text = (
        "BLEU falls to 0.45, not $0.658$; `x = 0.25` is code; `go .` => `va !` and "
        "{record}`bleu_held_out.bleu:.2f` is a role; see [0.99](page-0.12.md)"
    )
    figures, translations = quoted(text)
    assert figures == ["0.45", "0.99"]
    assert translations == [("go .", "va !")]


def test_a_typed_figure_must_be_in_every_frameworks_outputs():
    source = nbformat.v4.new_notebook()
    source.cells = [nbformat.v4.new_code_cell("...")]
    nbs = {
        fw: executed(fw, source, printed=f"go . => va !, BLEU {v:.3f}\n") for fw, v in BLEU.items()
    }
    assert stray_figures("the best was `go .` => `va !`", nbs) == []
    problems = stray_figures("BLEU 0.356 for `go .` => `va .`", nbs)
    assert len(problems) == 2
    assert "0.356, which no output of PyTorch, TensorFlow shows" in problems[0]
    assert "`go .` => `va .`" in problems[1]
    assert stray_figures("BLEU 0.356", {"mxnet": nbs["mxnet"]}) == []
    assert stray_figures("0.97, as the paper found", nbs, allowed={"0.97"}) == []
    drawing = "![weights 0.08 and 0.79, made up](img/x.svg) (arXiv:1409.0473)"
    assert stray_figures(drawing, nbs) == []


def write_source(tmp_path, prose, front=""):
    path = tmp_path / "page.md"
    path.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n"
        "kernelspec:\n  name: python3\n  display_name: Python 3\n  language: python\n"
        f"{front}---\n\n# Page\n\n```{{code-cell}} ipython3\nprint(1)\n```\n\n{prose}\n",
        encoding="utf-8",
    )
    return path


def notebooks_of(path, **kwargs):
    src = merge_module.read_source(path)
    return {fw: executed(fw, src, bleu=BLEU[fw], **kwargs) for fw in FRAMEWORKS}


def test_merge_checks_roles_and_stops_at_a_stale_figure(tmp_path):
    """The merge keeps a role for the site to fill in (booktools.record_role), so that the page's message for
    translators holds the role; a role that the notebooks cannot fill stops it."""
    path = write_source(tmp_path, "Held-out BLEU: {record}`bleu_held_out.bleu:.2f`.")
    out = merge(path, notebooks_of(path))
    kept = [c.source for c in out.cells if c.source.startswith("Held-out BLEU:")]
    assert kept == ["Held-out BLEU: {record}`bleu_held_out.bleu:.2f`."]
    missing = write_source(tmp_path, "Held-out BLEU: {record}`bleu_held_out.chrf:.2f`.")
    with pytest.raises(QuoteError, match="has no field 'chrf'"):
        merge(missing, notebooks_of(missing))
    stale = write_source(tmp_path, "The held-out BLEU falls to about 0.45.")
    with pytest.raises(QuoteError, match="quotes 0.45, which no output of MXNet, PyTorch"):
        merge(stale, notebooks_of(stale))
    setting = write_source(tmp_path, "with a learning rate of 0.005")
    with pytest.raises(QuoteError, match="quotes 0.005"):
        merge(setting, notebooks_of(setting))
    setting.write_text(setting.read_text().replace("print(1)", "lr = 0.005"))
    merge(setting, notebooks_of(setting))  # a figure of the page's code is a setting
    declared = write_source(
        tmp_path, "The paper reports 0.45.", front="d2l:\n  not_outputs: ['0.45']\n"
    )
    merge(declared, notebooks_of(declared))
