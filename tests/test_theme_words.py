"""The words of the pages that are not the book's text: the theme's (locales/<language>/LC_MESSAGES/sphinx.po) and
booktools' own (booktools.po), in every language of the book."""

import json
import re
from pathlib import Path

import pydata_sphinx_theme
import pytest
from babel.messages.pofile import read_po

from booktools.i18n import LANGUAGES, THEME_WORDS, catalogue, differences, translations_js
from booktools.paths import LOCALES

THEME_TEMPLATE = Path(pydata_sphinx_theme.__file__).parent / "locale" / "sphinx.pot"
PLACEHOLDER = re.compile(r"%\([a-z_]+\)s|%s|\{[a-z_]+\}|\$\{[a-zA-Z]+\}")


def _messages(path):
    with open(path, "rb") as f:
        return {m.id: m for m in read_po(f) if m.id}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", ["booktools", THEME_WORDS])
def test_every_word_is_translated_with_its_placeholders_and_markup(language, name):
    """Every message of the catalogue has a translation (none fuzzy) that keeps its placeholders (``%s``,
    ``{links}``, ``${resultCount}``) and its markup and figures (booktools.i18n.differences)."""
    path = LOCALES / language / "LC_MESSAGES" / f"{name}.po"
    assert path.is_file(), f"{path} is missing"
    messages = _messages(path)
    assert messages, f"{path} has no message"
    for msgid, message in messages.items():
        assert message.string and not message.fuzzy, f"{path}: {msgid!r} is not translated"
        assert sorted(PLACEHOLDER.findall(message.string)) == sorted(PLACEHOLDER.findall(msgid)), (
            f"{path}: {msgid!r}"
        )
        assert not differences(msgid, message.string, language), f"{path}: {msgid!r}"


def test_the_turkish_theme_words_are_all_of_the_themes():
    """pydata-sphinx-theme ships no Turkish: the book's Turkish catalogue translates every message of its template
    (the theme's Russian and Chinese catalogues serve the other languages, completed by the book's)."""
    template = set(_messages(THEME_TEMPLATE))
    missing = template - set(catalogue("tr", THEME_WORDS))
    assert not missing, f"locales/tr/LC_MESSAGES/{THEME_WORDS}.po lacks {sorted(missing)}"


def test_the_search_scripts_words_keep_sphinxs_own():
    """sphinx.js, which replaces Sphinx's own for the search page's script, holds Sphinx's translations of the
    language and the theme catalogue's, the latter first."""
    line = "Search finished, found ${resultCount} page(s) matching the search query."
    text = translations_js("tr", {line: "bulundu: ${resultCount}"})
    assert text.startswith("Documentation.addTranslations(") and text.endswith(");\n")
    data = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    assert data["locale"] == "tr"
    assert data["messages"]["Search Results"] == "Arama Sonuçları"  # Sphinx's own
    assert data["messages"][line] == "bulundu: ${resultCount}"
    assert "plural_expr" in data
