"""The code that pages show as part of d2lcore is the package's code (see booktools/saved.py)."""

import pytest

from booktools.paths import rel, sources
from booktools.saved import mismatches, saved_cells

CELLS = [(source, *cell) for source in sources() for cell in saved_cells(source)]


def test_pages_show_package_code():
    assert len(CELLS) >= 7, "expected the saved cells of sections 1 and 2"


@pytest.mark.parametrize(
    ("source", "cell_id", "package_file", "code"),
    CELLS,
    ids=[f"{rel(c[0]).stem}-{c[1]}" for c in CELLS],
)
def test_page_and_package_agree(source, cell_id, package_file, code):
    assert mismatches(code, package_file) == [], f"{rel(source)} cell {cell_id}"


def test_a_changed_line_is_caught():
    """The comparison is not vacuous: one changed constant, or a renamed helper, makes it fail."""
    source, cell_id, package_file, code = next(c for c in CELLS if "train_nw" in c[3])
    assert mismatches(code.replace("epoch + 1", "epoch + 2"), package_file) == [
        f"train_nw differs from its definition in {package_file}"
    ]
    assert mismatches(code.replace("d2l.Animator", "d2l.Animator2"), package_file) != []
    assert mismatches("x = 1", package_file) == ["the cell defines no function or class"]
    assert "does not exist" in mismatches(code, "d2lcore/nowhere.py")[0]


def test_comments_and_d2l_prefix_are_ignored(tmp_path):
    (tmp_path / "pkg.py").write_text("def f(x):\n    return check_shapes(x=(x, 'n'))\n")
    page = "# a comment\ndef f(x):  # another\n    return d2l.check_shapes(\n        x=(x, 'n')\n    )\n"
    assert mismatches(page, "pkg.py", root=tmp_path) == []
    assert mismatches(page.replace("'n'", "'m'"), "pkg.py", root=tmp_path) != []
