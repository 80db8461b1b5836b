"""The book's languages (booktools.i18n, booktools.translate, booktools.record_role): a translation shares its
message's roles, math, code, links and figures; the notebooks' markdown is translated block by block as Sphinx
sees the blocks; every catalogue in locales/ is consistent, and every page of a published language translated."""

import jupytext
import nbformat
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from booktools import i18n
from booktools.links import rewrite_links
from booktools.paths import CHAPTERS, LOCALES, rel
from booktools.translate import translate
from d2lcore import FRAMEWORKS
from d2lcore.records import MIME

PAGES = sorted(CHAPTERS.rglob("*.md"))


def _markdown(path):
    """The markdown cells of a page, with links as the staged site has them (booktools.links)."""
    nb = jupytext.read(path, fmt="md:myst")
    return [rewrite_links(c.source, path.parent) for c in nb.cells if c.cell_type == "markdown"]


@pytest.mark.parametrize(
    "message, translation, problems",
    [
        (
            "See {ref}`sec-x`, $a_i$, `f` and [x](y.ipynb).",
            "См. {ref}`sec-x`, $a_i$, `f` и [икс](y.ipynb).",
            0,
        ),
        ("A loss of 0.25.", "Потери 0,25.", 0),  # Russian writes a decimal comma
        ("A loss of 0.25.", "Потери 0,26.", 2),
        ("See {ref}`sec-x`.", "См. раздел.", 1),
        ("With $a_i$.", "С $a_j$.", 2),
        ("Call `f`.", "Вызовите `g`.", 2),
        ("Read [x](y.ipynb).", "Читайте [x](z.ipynb).", 2),
        ("Of {record}`bleu.bleu:.2f` BLEU.", "BLEU {record}`bleu.bleu:.2f`.", 0),
    ],
)
def test_a_translation_keeps_roles_math_code_links_and_figures(message, translation, problems):
    assert len(i18n.differences(message, translation, "ru")) == problems


def test_chinese_keeps_the_decimal_point():
    assert i18n.differences("A loss of 0.25.", "损失为0.25。", "zh_CN") == []
    assert i18n.differences("A loss of 0.25.", "损失为0,25。", "zh_CN") != []


@pytest.mark.parametrize("path", PAGES, ids=lambda p: rel(p).as_posix())
def test_every_block_of_a_page_is_found_and_replaced(path):
    """Each block that the translation looks up is replaced by its translation, and translating twice with an
    identity catalogue changes nothing but line breaks inside paragraphs."""
    for text in _markdown(path):
        _, blocks = translate(text, {})
        catalogue = {block: f"ZZ {block}" for block in blocks}
        translated, missing = translate(text, catalogue)
        assert missing == []
        for block in blocks:
            assert f"ZZ {block}" in translated
        _, again = translate(translated, {})
        assert sorted(again) == sorted(f"ZZ {block}" for block in blocks)


def test_directives_keep_their_fences_options_and_indentation():
    text = (
        "1. **Minutes.** A question.\n\n"
        "    :::{dropdown} Hint\n    Look at $x$.\n    :::\n\n"
        ":::{admonition} For readers of D2L\n:class: note d2l-note\n\n- One.\n- Two.\n:::\n"
    )
    catalogue = {
        "**Minutes.** A question.": "**Минуты.** Вопрос.",
        "Hint": "Подсказка",
        "Look at $x$.": "Посмотрите на $x$.",
        "For readers of D2L": "Читателям D2L",
        "One.": "Один.",
        "Two.": "Два.",
    }
    translated, missing = translate(text, catalogue)
    assert missing == []
    assert translated == (
        "1. **Минуты.** Вопрос.\n\n"
        "    :::{dropdown} Подсказка\n    Посмотрите на $x$.\n    :::\n\n"
        ":::{admonition} Читателям D2L\n:class: note d2l-note\n\n- Один.\n- Два.\n:::\n"
    )


def test_an_image_gets_its_alt_text_and_caption_translated():
    text = '![A grey box.](img/box.svg "The box.")'
    translated, missing = translate(text, {"A grey box.": "Серый ящик.", "The box.": "Ящик."})
    assert missing == [] and translated == '![Серый ящик.](img/box.svg "Ящик.")'


@pytest.mark.parametrize("language", list(i18n.LANGUAGES))
def test_every_translation_in_locales_is_consistent(language):
    problems = [
        (rel(path).as_posix(), msgid[:60], found)
        for path in i18n.catalogues(language).values()
        for msgid, found in i18n.check_catalogue(path, language)
    ]
    assert problems == []


@pytest.mark.parametrize("language", i18n.PUBLISHED)
@pytest.mark.parametrize("path", PAGES, ids=lambda p: rel(p).as_posix())
def test_every_page_of_a_published_language_is_translated(language, path):
    """Every block of the page's markdown has a translation that is not fuzzy (the notebooks' markdown; the
    strict build checks the site's messages against the English ones, booktools.i18n.check_complete)."""
    words = i18n.catalogue(language, rel(path).with_suffix("").as_posix())
    lacking = [block for text in _markdown(path) for block in translate(text, words)[1]]
    assert lacking == []


def test_a_notebook_in_another_language_keeps_the_code_and_outputs(tmp_path, monkeypatch):
    """The Russian notebook of a page: the English one's code cells and outputs, its markdown translated, its
    references to the page's own title translated, its record roles filled in with a decimal comma."""
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    source = chapters / "page.md"
    source.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n"
        "kernelspec:\n  name: python3\n  display_name: Python 3\n  language: python\n---\n\n"
        "(sec-page)=\n# A Page\n\n```{code-cell} ipython3\nprint(1)\n```\n\n"
        "BLEU of {record}`bleu.bleu:.2f` in {ref}`sec-page`.\n",
        encoding="utf-8",
    )
    english = nbformat.v4.new_notebook(metadata={"d2l": {"framework": "pytorch"}})
    record = {MIME: {"name": "bleu", "fields": {"bleu": 0.3561}}, "text/plain": "BLEU 0.356"}
    code = nbformat.v4.new_code_cell("print(1)", id="c001")
    code.outputs = [nbformat.v4.new_output("display_data", data=record)]
    english.cells = [
        nbformat.v4.new_markdown_cell("# A Page", id="c000"),
        code,
        nbformat.v4.new_markdown_cell("BLEU of 0.36 in [A Page](page.ipynb).", id="c002"),
    ]
    locales = tmp_path / "locales"
    catalogue = Catalog(locale="ru")
    catalogue.add("A Page", "Страница")
    catalogue.add(
        "BLEU of {record}`bleu.bleu:.2f` in {ref}`sec-page`.",
        "BLEU {record}`bleu.bleu:.2f` в {ref}`sec-page`.",
    )
    po = locales / "ru" / "LC_MESSAGES" / "chapters" / "page.po"
    po.parent.mkdir(parents=True)
    with open(po, "wb") as f:
        write_po(f, catalogue)
    monkeypatch.setattr(i18n, "LOCALES", locales)
    monkeypatch.setattr(i18n, "rel", lambda p: p.relative_to(tmp_path))
    monkeypatch.setattr(i18n, "notebook_path", lambda src, fw: tmp_path / f"{fw}.ipynb")
    nbformat.write(english, tmp_path / "pytorch.ipynb")
    from booktools.labels import Label

    known = {"sec-page": Label(source, "Страница", None, None)}
    russian = i18n.notebook("ru", source, "pytorch", known=known)
    assert [c.source for c in russian.cells] == [
        "# Страница",
        "print(1)",
        "BLEU 0,36 в [Страница](page.ipynb).",
    ]
    assert russian.cells[1].outputs == english.cells[1].outputs
    assert russian.metadata["d2l"]["language"] == "ru"
    catalogue.delete("A Page")
    with open(po, "wb") as f:
        write_po(f, catalogue)
    with pytest.raises(i18n.Untranslated, match="1 blocks have no ru translation"):
        i18n.notebook("ru", source, "pytorch", known=known)


def test_languages_are_declared_once():
    assert set(i18n.PUBLISHED) <= set(i18n.LANGUAGES)
    assert set(i18n.FOLDERS) == set(i18n.LANGUAGES) == set(i18n.HREFLANG) - {"en"}
    assert LOCALES.is_dir() and FRAMEWORKS


INDEX = """\
A Page
======

Held out: :record:`bleu.bleu:.2f`.

.. tab-set::

   .. tab-item:: PyTorch
      :sync: pytorch

      In PyTorch: :record:`bleu.bleu:.2f`.
"""


def _site(tmp_path, *defines):
    """A one-page site whose per-framework notebooks displayed a record bleu, built strictly; its HTML."""
    from sphinx.cmd.build import build_main

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir(exist_ok=True)
    (src / "conf.py").write_text('extensions = ["booktools.sphinx_ext"]\nproject = "t"\n')
    (src / "index.rst").write_text(INDEX)
    for fw, bleu in {"mxnet": 0.3561, "pytorch": 0.3649, "tensorflow": 0.4512}.items():
        record = {MIME: {"name": "bleu", "fields": {"bleu": bleu}}, "text/plain": "BLEU"}
        cell = nbformat.v4.new_code_cell("show()")
        cell.outputs = [nbformat.v4.new_output("display_data", data=record)]
        nb = nbformat.v4.new_notebook(cells=[cell], metadata={"d2l": {"framework": fw}})
        (tmp_path / "notebooks" / fw).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, tmp_path / "notebooks" / fw / "index.ipynb")
    args = ["-W", "-q", "-b", "html", "-Dd2l_install_from=pypi", *[f"-D{d}" for d in defines]]
    assert build_main([*args, str(src), str(out)]) == 0
    return (out / "index.html").read_text(encoding="utf-8")


def test_the_site_fills_in_record_roles_in_the_pages_language(tmp_path):
    html = _site(tmp_path)
    assert (
        'Held out: <span class="d2l-per-framework" data-mxnet="0.36" data-pytorch="0.36" '
        'data-tensorflow="0.45">0.36 (MXNet), 0.36 (PyTorch), 0.45 (TensorFlow)</span>.'
    ) in html
    assert "In PyTorch: 0.36." in html  # a framework's tab: its own value
    locales = tmp_path / "locales"
    catalogue = Catalog(locale="ru")
    # the message is the paragraph's source: reStructuredText here, MyST on the book's pages
    catalogue.add("Held out: :record:`bleu.bleu:.2f`.", "На отложенных: :record:`bleu.bleu:.2f`.")
    (locales / "ru" / "LC_MESSAGES").mkdir(parents=True)
    with open(locales / "ru" / "LC_MESSAGES" / "index.po", "wb") as f:
        write_po(f, catalogue)
    html = _site(tmp_path, "language=ru", f"locale_dirs={locales}", "gettext_compact=0")
    assert "На отложенных: <span" in html
    assert "0,36 (MXNet); 0,36 (PyTorch); 0,45 (TensorFlow)</span>" in html
    assert "In PyTorch: 0,36." in html


def test_a_moved_message_keeps_its_translation(tmp_path, monkeypatch):
    """`make gettext` (i18n.carry_over): a paragraph moved to a new page (an untranslated message there) takes the
    translation it has elsewhere in its language, an obsolete one included; a fuzzy message is left alone."""
    from babel.messages.catalog import Message
    from babel.messages.pofile import read_po

    folder = tmp_path / "ru" / "LC_MESSAGES" / "chapters"
    folder.mkdir(parents=True)

    def write(name, messages, obsolete=()):
        catalog = Catalog(locale="ru")
        for msgid, msgstr, fuzzy in messages:
            catalog.add(msgid, msgstr, flags=["fuzzy"] if fuzzy else [])
        for msgid, msgstr in obsolete:
            catalog.obsolete[msgid] = Message(msgid, msgstr)
        with open(folder / name, "wb") as f:
            write_po(f, catalog, width=0)

    write("old.po", [("Kept.", "Оставлено.", False)], obsolete=[("Moved.", "Перенесено.")])
    write("new.po", [("Moved.", "", False), ("Kept.", "", False), ("Changed.", "Старое.", True)])
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    assert i18n.carry_over(["ru"]) == {"ru": 2}
    with open(folder / "new.po", "rb") as f:
        new = {m.id: (m.string, m.fuzzy) for m in read_po(f) if m.id}
    assert new == {
        "Moved.": ("Перенесено.", False),
        "Kept.": ("Оставлено.", False),
        "Changed.": ("Старое.", True),
    }
    assert i18n.carry_over(["ru"]) == {"ru": 0}
