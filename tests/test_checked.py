"""Checked notebooks (booktools/checked.py): the site's notebooks with the recorded outputs in their checked cells,
for plain nbval anywhere; and the notebooks `make nbval` executes in fresh environments (booktools/standalone.py):
the site's notebooks, their setup cells pointed at the site it serves, kept for the build as the build's own."""

import shutil
import zipfile

import nbformat
import pytest

from booktools.checked import NotCheckable, write_checked
from booktools.execute import environment_hash
from booktools.expected import is_checked, load, to_outputs
from booktools.paths import CHAPTERS
from booktools.split import WHEEL, setup_source, split

SOURCE = CHAPTERS / "attention" / "attention-scoring-functions.md"


def fake_site(tmp_path, framework, edit=None):
    """A site folder whose zip holds the split notebook of SOURCE (no outputs), optionally edited."""
    nb = split(SOURCE, framework)
    if edit:
        edit(nb)
    docname = "chapters/attention/attention-scoring-functions"
    html = tmp_path / "html"
    (html / "notebooks").mkdir(parents=True)
    with zipfile.ZipFile(html / "notebooks" / f"{framework}.zip", "w") as zf:
        zf.writestr(f"{framework}/{docname}.ipynb", nbformat.writes(nb))
    return html


@pytest.mark.parametrize("framework", ["mxnet", "pytorch", "tensorflow"])
def test_checked_cells_get_the_recorded_outputs(tmp_path, framework):
    html = fake_site(tmp_path, framework)
    [(path, checked)] = write_checked(framework, tmp_path / "out", html)
    assert (
        path
        == tmp_path / "out" / framework / "chapters/attention/attention-scoring-functions.ipynb"
    )
    nb = nbformat.read(path, as_version=4)
    cells = [cell for cell in nb.cells if is_checked(cell)]
    recorded = load(SOURCE, framework)
    assert checked == len(cells) == len(recorded) > 0
    for cell, entry in zip(cells, recorded, strict=True):
        assert cell.outputs == to_outputs(entry["outputs"]) and cell.execution_count == 1


def test_a_checked_cell_without_recorded_outputs_is_refused(tmp_path):
    def edit(nb):
        cell = next(cell for cell in nb.cells if is_checked(cell))
        cell.source += "\nprint('new')"

    html = fake_site(tmp_path, "pytorch", edit)
    with pytest.raises(
        NotCheckable, match="1 checked cells without recorded outputs and 1 recorded"
    ):
        write_checked("pytorch", tmp_path / "out", html)


def test_a_site_without_the_zip_is_refused(tmp_path):
    with pytest.raises(NotCheckable, match="make html"):
        write_checked("pytorch", tmp_path / "out", tmp_path)


def test_nbval_runs_the_notebooks_the_site_offers(tmp_path, monkeypatch):
    """The setup cell names the served wheel as the site's copy names the site's (booktools.sphinx_ext), and the
    rest is the build's notebook with the recorded outputs; what is kept for the build has the build's setup cell
    and none of the installation's output."""
    from booktools import standalone
    from booktools.sphinx_ext import _published

    monkeypatch.setattr(standalone, "installs_from_site", lambda: True)
    env = standalone.Environment("pytorch", [SOURCE], "restricted", "python3", environment_hash())
    env.write_notebooks("http://127.0.0.1:8123/")
    [(source, path, checked, problems)] = env.notebooks
    assert source == SOURCE and checked == len(load(SOURCE, "pytorch")) > 0 and problems == []
    nb = nbformat.read(path, as_version=4)
    plain = tmp_path / "plain.ipynb"
    nbformat.write(split(SOURCE, "pytorch"), plain)
    local = f"http://127.0.0.1:8123/notebooks/{WHEEL}"
    published = nbformat.reads(_published(plain, "pytorch", local).decode(), as_version=4)
    assert [c.source for c in nb.cells] == [c.source for c in published.cells]
    assert nb.cells[0].source.count(f"d2lcore[torch] @ {local}") == 2
    assert (env.root / f"{standalone.PLUGIN}.py").read_text().startswith('"""A pytest plugin')

    # the plugin wrote the executed notebook (here: the prepared one, with an installation's output)
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stderr", text="Installing ...")]
    nb.metadata.d2l.pop("executed")
    nb.metadata.d2l.update(seconds=1.5, cpu="restricted")
    nbformat.write(nb, standalone.executed_path(path))
    monkeypatch.setattr(
        standalone, "keep_executed", lambda p, s, f: nbformat.read(standalone.executed_path(p), 4)
    )
    kept = standalone.keep(path, SOURCE, "pytorch")
    assert kept.cells[0].source == setup_source("pytorch") and kept.cells[0].outputs == []
    shutil.rmtree(env.root)


def run_nbval(tmp_path, cells, env=None):
    """pytest --nbval-lax on a notebook of ``cells`` in this environment; (return code, output, JUnit path)."""
    import os
    import subprocess
    import sys

    notebook, junit = tmp_path / "t.ipynb", tmp_path / "junit.xml"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), notebook
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax"]
    command += ["--nbval-current-env", f"--junitxml={junit}", str(notebook)]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    return done.returncode, done.stdout + done.stderr, junit


def test_a_kernel_that_dies_as_it_starts_is_told_from_a_failing_cell(tmp_path):
    """`make nbval` gives a notebook a second kernel only where its first ran no cell (booktools/standalone.py)."""
    from booktools.standalone import failure_report, kernel_not_started

    shadow = tmp_path / "shadow"  # a kernel launcher that exits at once
    shadow.mkdir()
    (shadow / "ipykernel_launcher.py").write_text("import sys\nsys.exit(3)\n")
    code, output, junit = run_nbval(tmp_path, ["1 + 1", "print(2)"], {"PYTHONPATH": str(shadow)})
    assert code != 0
    assert "Kernel died before replying to kernel_info" in kernel_not_started(junit)
    report = failure_report(output)
    assert report.startswith("E ") and "Kernel died before replying" in report.splitlines()[0]

    code, output, junit = run_nbval(tmp_path, ["1 + 1", "1 / 0"])
    assert code != 0 and kernel_not_started(junit) is None
    report = failure_report(output)
    assert report.startswith("FAILED t.ipynb::Cell 1 - Notebook cell execution failed\n")
    assert "ZeroDivisionError" in report and "\x1b[" not in report
