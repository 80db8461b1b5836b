"""Section numbers and references by label (booktools/labels.py): the numbers follow _toc.yml, and the
per-framework notebooks, which Jupyter reads, get plain links instead of MyST labels and roles."""

import pytest

from booktools import labels as L
from booktools.paths import CHAPTERS, ROOT, sources
from booktools.split import split
from d2lcore.frameworks import FRAMEWORKS


def test_sections_are_numbered_in_toc_order():
    numbered = L.numbered_files()
    assert numbered[:2] == [
        "chapters/attention/attention-cues",
        "chapters/attention/nadaraya-watson",
    ]
    known = L.labels()
    for i, name in enumerate(numbered, start=1):
        label = f"sec-{name.rpartition('/')[2]}"
        assert known[label].number == str(i), label
        assert known[label].anchor is None  # a page's title: the link names the page


def test_a_subsection_label_gets_its_number_and_jupyters_anchor():
    label = L.labels()["sec-volitional-cues"]
    assert label.title == "Nonvolitional and Volitional Cues"
    assert label.number == "1.2"  # the second ## heading of section 1
    assert label.anchor == "Nonvolitional-and-Volitional-Cues"


def test_references_become_links():
    folder = CHAPTERS / "attention"
    text = (
        "(sec-here)=\n# Here\n\nSee {ref}`sec-transformer`, {numref}`sec-bahdanau-attention`, "
        "{ref}`these cues <sec-volitional-cues>` and {numref}`section %s <sec-seq2seq-toolkit>`."
    )
    assert L.plain_references(text, folder) == (
        "# Here\n\nSee [The Transformer](transformer.md), [Section 5](bahdanau-attention.md), "
        "[these cues](attention-cues.md#Nonvolitional-and-Volitional-Cues) and "
        "[section 4](seq2seq-toolkit.md)."
    )
    assert L.plain_references("{ref}`sec-transformer`", ROOT / "chapters") == (
        "[The Transformer](attention/transformer.md)"
    )


def test_an_unknown_label_is_an_error():
    with pytest.raises(L.LabelError, match="sec-nowhere"):
        L.plain_references("see {ref}`sec-nowhere`", CHAPTERS)


def test_two_headings_with_one_label_are_an_error(tmp_path):
    (tmp_path / "a.md").write_text("(sec-a)=\n# A\n")
    (tmp_path / "b.md").write_text("(sec-a)=\n# B\n")
    with pytest.raises(L.LabelError, match="sec-a labels a heading of"):
        L.labels.__wrapped__(tmp_path)


@pytest.mark.parametrize("source", sources(), ids=lambda s: s.stem)
def test_notebooks_hold_no_labels_or_roles(source):
    """What a reader opens in Jupyter: plain Markdown links, no MyST syntax that Jupyter would show raw."""
    for framework in FRAMEWORKS:
        for cell in split(source, framework).cells:
            if cell.cell_type == "markdown":
                assert not L.TARGET.search(cell.source), cell.source[:80]
                assert "{ref}" not in cell.source and "{numref}" not in cell.source
