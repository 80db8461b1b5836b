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
        alias = REGISTRY[fw].module.rpartition(".")[2]  # torch for d2lcore.torch
        assert first.source.splitlines()[0] == f"from d2lcore import {alias} as d2l"


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


SIZES = ("**Minutes.**", "**An hour.**", "**Project.**")


def _exercises(cells):
    """The items of the page's list of exercises (text after the number), in order."""
    text = next(
        c.source for c in cells if c.cell_type == "markdown" and "## Exercises\n" in c.source
    )
    section = text.split("## Exercises\n", 1)[1].split("\n## ", 1)[0]
    return re.split(r"^\d+\. ", section, flags=re.M)[1:]


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_every_exercise_has_a_size_and_a_hint(source):
    """Each exercise starts with its size and has exactly one hint, in its Hint dropdown, none inline."""
    items = _exercises(read_source(source).cells)
    assert items, "no numbered exercises"
    for n, item in enumerate(items, 1):
        assert item.startswith(SIZES), f"exercise {n} does not start with one of {SIZES}"
        assert item.count(":::{dropdown} Hint\n") == 1, f"exercise {n} needs one hint"
        assert not re.search(r"\(Hint\b", item, flags=re.I), (
            f"exercise {n} has an inline '(Hint: ...)': put it into its Hint dropdown"
        )


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_solutions_cover_the_exercises_under_an_hour_and_stay_closed(source):
    """Where a page has solutions, every exercise that is not a project has one, and their code is hidden."""
    cells = read_source(source).cells
    heading = re.compile(r"^## .*$", flags=re.M)
    start = next(
        (i for i, c in enumerate(cells) if "## Solutions" in heading.findall(c.source)), None
    )
    if start is None:
        return
    wanted = [
        str(n) for n, item in enumerate(_exercises(cells), 1) if not item.startswith(SIZES[2])
    ]
    text, code = cells[start].source.split("## Solutions", 1)[1], []
    for cell in cells[start + 1 :]:
        if cell.cell_type == "code":
            code.append(cell)
        elif heading.search(cell.source):
            text += "\n" + heading.split(cell.source, 1)[0]
            break
        else:
            text += "\n" + cell.source
    titles = re.findall(r"^:::\{dropdown\} Solution to exercise (\d+)$", text, flags=re.M)
    missing = [n for n in wanted if n not in titles]
    assert not missing, f"no solution to exercise(s) {missing}, which are not projects"
    assert titles == sorted(set(titles), key=int), f"solutions out of order or repeated: {titles}"
    assert code, (
        "solutions but no code: tag the solutions' code cells hide-cell, or drop this test's check"
    )
    for cell in code:
        assert "hide-cell" in cell.metadata.get("tags", []), f"cell {cell.id} is not hidden"


D2L_NOTE = re.compile(
    r"^:::\{admonition\} For readers of D2L\n:class: note d2l-note\n\n(.*?)^:::\n", re.M | re.S
)
D2L_WORDS = re.compile(r"\bD2L\b|Dive into Deep Learning|reference book")
"""How prose names D2L (*Dive into Deep Learning*): on a section page, only inside its note for readers of D2L and
in the bibliography (## References)."""


def _markdown(source):
    return "\n\n".join(c.source for c in read_source(source).cells if c.cell_type == "markdown")


def _without_references(text):
    """``text`` without its bibliography, the ## References section."""
    return re.sub(r"^## References\n.*?(?=^## |\Z)", "", text, flags=re.M | re.S)


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_one_note_for_readers_of_d2l_right_before_the_summary(source):
    """Every difference from D2L that a page mentions sits in one note for readers of D2L (CONTRIBUTING.md), right
    before ## Summary (## Exercises where there is no summary); nowhere else does the page name D2L."""
    text = _markdown(source)
    notes = list(D2L_NOTE.finditer(text))
    assert len(notes) == 1, f"{len(notes)} notes 'For readers of D2L' (expected one)"
    bullets = re.findall(r"^- ", notes[0].group(1), flags=re.M)
    assert bullets, "the note lists the differences as bullets"
    after = text[notes[0].end() :].lstrip()
    assert after.startswith("## Summary" if "\n## Summary\n" in text else "## Exercises"), (
        f"the note must come right before the summary; it is followed by {after[:60]!r}"
    )
    outside = _without_references(text[: notes[0].start()] + text[notes[0].end() :])
    found = D2L_WORDS.findall(outside)
    assert not found, f"D2L is named outside the note: {found}"


REFERENCE_WORD = re.compile(r"\breferences?\b", re.I)
"""In prose, "reference" means what BLEU and chrF compare a translation with: a reference translation."""


def _prose_paragraphs(text):
    """The paragraphs of Markdown ``text``, without fenced code blocks, code spans, math and roles."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    text = re.sub(r"\{\w+\}`[^`]*`|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", "", text, flags=re.S)
    return re.split(r"\n\s*\n", text)


def _misused_references(text):
    """The paragraphs that say "reference" in another sense than a reference translation of BLEU or chrF: allowed
    are the heading of the bibliography, "reference translation(s)", and paragraphs about BLEU or chrF (that name
    them, or compare a prediction with its reference)."""
    misused = []
    for paragraph in _prose_paragraphs(text):
        prose = paragraph.replace("## References", "")
        words = [
            m
            for m in REFERENCE_WORD.finditer(prose)
            if not prose[m.end() :].startswith(" translation")
        ]
        if words and not re.search(r"BLEU|chrF|\bpredictions?\b", prose):
            misused.append(prose.strip()[:100])
    return misused


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_reference_means_a_reference_translation(source):
    assert not _misused_references(_markdown(source))


@pytest.mark.parametrize(
    "page", ["chapters/intro.md", "chapters/running-locally.md", "chapters/attention/index.md"]
)
def test_other_pages_use_reference_in_one_sense(page):
    assert not _misused_references((ROOT / page).read_text(encoding="utf-8"))


def test_the_readme_lists_every_section():
    """The README's table of what the book holds has a row for each section, by its title."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for source in sources():
        title = next(
            line[2:]
            for line in source.read_text(encoding="utf-8").splitlines()
            if line.startswith("# ")
        )
        assert f"\n| {title} |" in readme, (
            f"README.md's table of sections lacks {title!r} ({rel(source)})"
        )
