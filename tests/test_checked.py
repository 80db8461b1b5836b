"""Checked notebooks (booktools/checked.py): the site's notebooks with the recorded outputs in their checked cells,
for plain nbval anywhere; and how `make standalone` points a setup cell at the site it serves."""

import zipfile

import nbformat
import pytest

from booktools.checked import NotCheckable, write_checked
from booktools.expected import is_checked, load, to_outputs
from booktools.paths import CHAPTERS
from booktools.split import WHEEL, setup_source, split
from booktools.standalone import install_from

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


def test_install_from_points_the_setup_cell_at_the_local_site(tmp_path):
    url = f"https://someone.github.io/book/notebooks/{WHEEL}"
    path = tmp_path / "nb.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup_source("pytorch", url))])
    nbformat.write(nb, path)
    local = f"http://127.0.0.1:8123/notebooks/{WHEEL}"
    assert install_from(path, "http://127.0.0.1:8123/") == local
    code = nbformat.read(path, as_version=4).cells[0].source
    assert code.count(f"d2lcore[torch] @ {local}") == 2 and "github.io" not in code

    nb.cells[0].source = setup_source("pytorch")  # PyPI: nothing to point elsewhere
    nbformat.write(nb, path)
    assert install_from(path, "http://127.0.0.1:8123/") is None
