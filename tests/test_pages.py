"""Conventions every section follows (see CONTRIBUTING.md)."""

import re

import pytest

from booktools.cells import frameworks_of, is_shared
from booktools.labels import REFERENCE, labels
from booktools.paths import ROOT, rel, sources
from booktools.split import read_source
from d2lcore.frameworks import FRAMEWORKS, REGISTRY

SOURCES = sources()
IDS = [rel(s).stem for s in SOURCES]


def test_the_book_has_sections():
    assert [rel(s).stem for s in SOURCES][:2] == ["attention-cues", "nadaraya-watson"]


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_code_fits_the_page(source):
    """Code boxes show about 100 characters; longer lines scroll sideways."""
    for cell in read_source(source).cells:
        if cell.cell_type == "code":
            for line in cell.source.splitlines():
                assert len(line) <= 100, f"cell {cell.id}: {line}"


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_section_ends_with_summary_and_exercises(source):
    headings = [
        line
        for cell in read_source(source).cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("## ")
    ]
    assert "## Summary" in headings and "## Exercises" in headings
    assert headings.index("## Summary") < headings.index("## Exercises")


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_each_framework_imports_d2lcore_first(source):
    """MXNet needs d2lcore's shim before it is imported; the same order everywhere reads best."""
    for fw in FRAMEWORKS:
        first = next(
            c for c in read_source(source).cells if c.cell_type == "code" and fw in frameworks_of(c)
        )
        assert not is_shared(first), f"the first {fw} code cell should be {fw}'s own imports"
        assert first.source.splitlines()[0] == REGISTRY[fw].import_line


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_section_checks_some_outputs(source):
    checked = [
        c for c in read_source(source).cells if "nbval-check-output" in c.metadata.get("tags", [])
    ]
    assert checked, "tag the cells with deterministic output nbval-check-output"


TYPED_NUMBER = re.compile(r"(?<!\d{4}, )\b[Ss]ections? \d")
"""A section number typed into prose ("section 5"); a paper's own sections ("Vaswani et al. (2017, section 3.4)")
are not the book's."""


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_sections_are_referred_to_by_label(source):
    """The page's title carries its label, and prose refers to sections by label ({ref}/{numref}), never by a
    typed number: _toc.yml numbers the sections, and a number typed in would go stale when one is added."""
    cells = read_source(source).cells
    assert cells[0].cell_type == "markdown"
    assert cells[0].source.startswith(f"(sec-{rel(source).stem})=\n# "), cells[0].source[:80]
    known = labels()
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        assert not TYPED_NUMBER.search(cell.source), TYPED_NUMBER.search(cell.source).group(0)
        for match in REFERENCE.finditer(cell.source):
            assert (match.group(3) or match.group(4)).strip() in known, match.group(0)


@pytest.mark.parametrize("page", ["chapters/intro.md", "chapters/running-locally.md"])
def test_other_pages_refer_to_sections_by_label(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    assert not TYPED_NUMBER.search(text)
    for match in REFERENCE.finditer(text):
        assert (match.group(3) or match.group(4)).strip() in labels(), match.group(0)
