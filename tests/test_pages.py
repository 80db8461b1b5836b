"""Conventions every section follows (see CONTRIBUTING.md)."""

import pytest

from booktools.cells import frameworks_of, is_shared
from booktools.paths import rel, sources
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
