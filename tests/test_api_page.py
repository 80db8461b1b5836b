"""The API page's ``d2l-api`` directive (booktools.api) on a one-page project, in a strict build (-W -n): every
public name, by section, with the signature and docstring of its PyTorch code."""

import html
import inspect
import re

from sphinx.cmd.build import build_main

from booktools.api import literal_roles
from d2lcore import common
from d2lcore.interface import NAMES, SECTIONS


def test_literal_roles():
    text = (
        "see :func:`_heatmap_size`, :class:`~d2lcore.records.Record` and :py:meth:`the call <a.b>`"
    )
    assert (
        literal_roles(text) == "see ``_heatmap_size``, ``d2lcore.records.Record`` and ``the call``"
    )


def test_the_page_shows_every_name_from_its_code(tmp_path):
    import d2lcore.torch as d2l

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["booktools.sphinx_ext"]\nproject = "t"\nd2l_install_from = "pypi"\n'
    )
    (src / "index.rst").write_text("The Library\n===========\n\n.. d2l-api::\n")
    assert build_main(["-W", "-n", "-q", "-b", "html", str(src), str(out)]) == 0, (
        "the strict build failed"
    )
    page = (out / "index.html").read_text(encoding="utf-8")
    shown = re.findall(r'sig-name descname"><span class="pre">(\w+)<', page)
    top_level = [name for name in shown if name in NAMES]
    assert top_level == list(NAMES), "every name once, in the order of d2lcore.interface.SECTIONS"
    text = html.unescape(re.sub(r"<[^>]+>", "", page)).replace("’", "'")  # Sphinx's smart quotes
    for title in SECTIONS:
        assert f"{title}¶" in text, title
    assert "**Bad inputs.**" not in text and "Bad inputs." in text, (
        "the interface's docstring, rendered"
    )
    # PyTorch's signatures and docstrings, as its code has them
    assert "class AddNorm(num_hiddens, dropout)" in text
    assert "forward(queries, keys, values, valid_lens=None)" in text
    assert inspect.getdoc(d2l.set_seed).splitlines()[0] in text
    # the neutral names, and only they, are marked
    assert text.count("neutral. ") == sum(hasattr(common, name) for name in NAMES)


def test_the_books_api_pages_hold_every_section_once_in_order():
    """The API reference is in parts (chapters/api.md and the pages under it in _toc.yml), so that no page is too
    long: their d2l-api directives name every section of d2lcore.interface once, in its order."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    api = next(entry for entry in toc["chapters"] if entry["file"] == "chapters/api")
    pages = [api["file"], *(section["file"] for section in api.get("sections", []))]
    titles = []
    for page in pages:
        text = (root / f"{page}.md").read_text(encoding="utf-8")
        block = re.search(r"```\{eval-rst\}\n\.\. d2l-api::\n\n((?:   .+\n)+)```", text)
        assert block, f"{page}.md has no d2l-api directive naming its sections"
        titles += [line.strip() for line in block.group(1).splitlines()]
    assert titles == list(SECTIONS), "every section of d2lcore.interface once, in its order"


def _build_api(tmp_path, directive):
    """A one-page project whose page is ``directive``, built strictly: (exit status, page text or None)."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(
        'extensions = ["booktools.sphinx_ext"]\nproject = "t"\nd2l_install_from = "pypi"\n'
    )
    (src / "index.rst").write_text("The Library\n===========\n\n" + directive)
    status = build_main(["-W", "-n", "-q", "-b", "html", str(src), str(out)])
    page = out / "index.html"
    return status, page.read_text(encoding="utf-8") if page.exists() else None


def test_a_part_shows_only_its_sections_and_an_unknown_title_fails_the_build(tmp_path):
    first, last = list(SECTIONS)[0], list(SECTIONS)[-1]
    status, page = _build_api(tmp_path / "part", f".. d2l-api::\n\n   {last}\n")
    assert status == 0
    shown = [
        n for n in re.findall(r'sig-name descname"><span class="pre">(\w+)<', page) if n in NAMES
    ]
    assert shown == list(SECTIONS[last]), "only the names of the section it names"
    assert "Bad inputs." not in html.unescape(page), (
        "the interface's docstring comes with the first section"
    )
    status, _ = _build_api(
        tmp_path / "unknown", f".. d2l-api::\n\n   {first}\n   No Such Section\n"
    )
    assert status != 0, "a title that is not a section of d2lcore.interface fails the build"
