"""Browser tests of the book's other languages (booktools.i18n.PUBLISHED), each a site of its own under
_build/html/<folder>/ (ru, tr, zh-cn), next to the English one and served with it from one origin.

A focused set per language, not a copy of the English suite (tests/test_browser.py, which covers the English pages
only): the language menu (same page, same section, same framework, and back), the ``lang`` attribute and the
``hreflang`` links, no English paragraph left on a page, the framework tabs and their remembered choice across
pages and languages, the Colab links and notebook downloads of the language, search in the language, and no
JavaScript errors. The server, the browser and the helpers are those of the English suite.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path, PurePosixPath
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from booktools.i18n import (
    FOLDERS,
    HREFLANG,
    LANGUAGES,
    PUBLISHED,
    THEME_WORDS,
    catalogue,
    gettext_function,
)
from tests import test_browser as english
from tests.test_browser import (
    CODE_TAB_SETS,
    FRAMEWORKS,
    NARROW_VIEWPORT,
    SITE_DIR,
    SYNC_GROUP,
    WIDE_VIEWPORT,
    _colab_config,
    collect_errors,
    expect_framework_selected,
    is_known_error,
    select_framework,
    sized_page,
)

# The English suite's fixtures: the whole site (every language) served from one origin, Chromium, and a fresh
# context (empty localStorage) and page per test.
site_url, browser, context, page = english.site_url, english.browser, english.context, english.page

pytestmark = pytest.mark.browser

# sphinx-design's remembered choice of framework: one per origin, shared by every language
STORAGE_KEY = f"sphinx-design-tab-id-{SYNC_GROUP}"
MENU_BUTTON = ".article-header-buttons button.d2l-language-button"
MENU_LIST = "ul.d2l-language-list"


# --------------------------------------------------------------------------------------------- page discovery


def _pages(folder: str, marker: str = "") -> list[str]:
    """The chapter pages of the site in ``folder`` ("" for English), relative to that site, whose HTML contains
    ``marker``."""
    root = SITE_DIR / folder / "chapters"
    if not root.is_dir():
        return []
    return sorted(
        path.relative_to(SITE_DIR / folder).as_posix()
        for path in root.rglob("*.html")
        if marker in path.read_text(encoding="utf-8", errors="replace")
    )


# the English pages with code tabs; every language has them too
TAB_PAGES = _pages("", "d2l-framework-tabs")


def _language_params() -> list:
    return [pytest.param(code, id=code) for code in PUBLISHED]


def _page_params(marker: str = "") -> list:
    """(language, page) for every chapter page of every published language; a placeholder that fails where a
    language's site has none (it was not built)."""
    params = []
    for code in PUBLISHED:
        pages = _pages(FOLDERS[code], marker)
        params += [pytest.param(code, p, id=f"{code}-{p}") for p in pages]
        if not pages:
            params.append(pytest.param(code, None, id=f"{code}-no-pages-found"))
    return params


def _require(page: str | None, code: str) -> str:
    assert page is not None, (
        f"no page of {LANGUAGES[code]} under {SITE_DIR / FOLDERS[code] / 'chapters'}"
    )
    return page


def _first_tab_page() -> str:
    assert TAB_PAGES, f"no English page with code tabs under {SITE_DIR / 'chapters'}"
    return TAB_PAGES[0]


def in_language(site_url: str, code: str | None, path: str) -> str:
    """The address of ``path`` (relative to a site) in the language ``code`` (None: English)."""
    return f"{site_url}{FOLDERS[code] + '/' if code else ''}{path}"


# ------------------------------------------------------------------------------------------------ the menu


def open_menu(page: Page) -> None:
    page.locator(MENU_BUTTON).click()
    expect(page.locator(MENU_LIST)).to_be_visible()


def menu_entry(page: Page, hreflang: str):
    return page.locator(f'{MENU_LIST} a[hreflang="{hreflang}"]')


# A section of the page below its first screen, with an id: where the menu should bring the reader back to.
SECTION_JS = """() => {
    const sections = Array.from(document.querySelectorAll("article.bd-article section section[id]"));
    return (sections.find(s => s.getBoundingClientRect().top > window.innerHeight) ?? sections.at(-1))?.id ?? null;
}"""

# Where the element of the URL's fragment is, once the page has settled: in the first screen, or not.
AT_FRAGMENT_JS = """async () => {
    await window.MathJax?.startup?.promise;
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!target) return null;
    const top = target.getBoundingClientRect().top;
    return {top, height: window.innerHeight, scrolled: window.scrollY};
}"""


def expect_at_section(page: Page, section: str) -> None:
    """The page shows ``section`` (the URL's fragment) at the top of its screen."""
    assert urlsplit(page.url).fragment == section, page.url
    page.wait_for_load_state("load")
    where = page.evaluate(AT_FRAGMENT_JS)
    assert where is not None, f"{page.url}: no element with the id {section!r}"
    assert where["scrolled"] > 0 and -5 <= where["top"] < where["height"] / 2, (
        f"{page.url}: section {section!r} is at {where['top']:.0f} px of a {where['height']} px screen"
    )


def expect_query(page: Page, expected: dict[str, list[str]]) -> None:
    assert parse_qs(urlsplit(page.url).query) == expected, page.url


@pytest.mark.parametrize("code", _language_params())
def test_the_menu_keeps_page_section_and_framework(page: Page, site_url: str, code: str):
    """From the English page of a section with code tabs, at one of its sections, with a framework chosen and
    another query parameter: the menu opens the same page in the language, at that section, with that framework
    selected and the other parameter kept; from there, by keyboard, back to English with the framework chosen
    there."""
    path = _first_tab_page()
    page.set_viewport_size(WIDE_VIEWPORT)
    page.goto(in_language(site_url, None, path) + "?keep=1")
    section = page.evaluate(SECTION_JS)
    assert section, f"{path}: no section with an id"
    page.goto(in_language(site_url, None, path) + f"?keep=1#{section}")
    select_framework(page, "tensorflow")
    expect_framework_selected(page, "tensorflow")

    open_menu(page)
    with page.expect_navigation():
        menu_entry(page, HREFLANG[code]).click()
    assert page.url.split("?")[0] == in_language(site_url, code, path)
    expect_query(page, {"keep": ["1"], SYNC_GROUP: ["tensorflow"]})
    assert page.evaluate("document.documentElement.lang") == HREFLANG[code]
    expect_framework_selected(page, "tensorflow")
    expect_at_section(page, section)

    # by keyboard: focus the button, arrow down into the list, down to English (the first entry), Enter
    select_framework(page, "pytorch")
    page.locator(MENU_BUTTON).focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator(MENU_LIST)).to_be_visible()
    current = menu_entry(page, HREFLANG[code])
    expect(current).to_be_focused()
    page.keyboard.press("Escape")  # closes the list, back on the button
    expect(page.locator(MENU_LIST)).to_be_hidden()
    expect(page.locator(MENU_BUTTON)).to_be_focused()
    page.keyboard.press("Enter")  # opens it again
    expect(page.locator(MENU_LIST)).to_be_visible()
    page.keyboard.press("Tab")  # into the list: its first entry, English
    english = menu_entry(page, "en")
    expect(english).to_be_focused()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.split("?")[0] == in_language(site_url, None, path)
    expect_query(page, {"keep": ["1"], SYNC_GROUP: ["pytorch"]})
    assert page.evaluate("document.documentElement.lang") == "en"
    expect_framework_selected(page, "pytorch")
    expect_at_section(page, section)


MENU_JS = """() => Array.from(document.querySelectorAll("ul.d2l-language-list a"), a => ({
        text: a.textContent, hreflang: a.getAttribute("hreflang"), lang: a.getAttribute("lang"),
        current: a.getAttribute("aria-current"),
    }))"""

# Each entry's place on the screen, and the button's.
MENU_BOXES_JS = """() => {
    const box = element => {
        const r = element.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, height: r.height};
    };
    return {
        button: box(document.querySelector("button.d2l-language-button")),
        entries: Array.from(document.querySelectorAll("ul.d2l-language-list a"), box),
        width: window.innerWidth,
    };
}"""


@pytest.mark.parametrize("code", _language_params())
def test_the_menu_names_every_language_and_marks_the_pages_own(
    page: Page, site_url: str, code: str
):
    """The menu lists English and every published language, each in its own name with its ``lang`` and
    ``hreflang``, in the order of the page's ``hreflang`` links; only the page's own language is marked
    (``aria-current``), and the button's accessible name says which it is."""
    page.goto(in_language(site_url, code, _first_tab_page()))
    button = page.locator(MENU_BUTTON)
    expect(button).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "false")
    entries = page.evaluate(MENU_JS)
    expected = [("English", "en")] + [(LANGUAGES[c], HREFLANG[c]) for c in PUBLISHED]
    assert [(e["text"], e["hreflang"]) for e in entries] == expected
    assert all(e["lang"] == e["hreflang"] for e in entries), entries
    assert [e["hreflang"] for e in entries if e["current"] == "true"] == [HREFLANG[code]], entries
    assert LANGUAGES[code] in (button.get_attribute("aria-label") or "")
    open_menu(page)
    expect(button).to_have_attribute("aria-expanded", "true")
    page.mouse.click(5, 600)  # a click elsewhere closes it
    expect(page.locator(MENU_LIST)).to_be_hidden()


@pytest.mark.parametrize("code", _language_params())
def test_the_menu_works_on_a_phone(browser: Browser, site_url: str, code: str):
    """At 390 px the menu's button is in the header, its list opens inside the screen with entries a finger can
    hit (40 px tall at least), and a tap on one opens the page in that language."""
    path = _first_tab_page()
    with sized_page(browser, site_url, NARROW_VIEWPORT) as page:
        page.goto(in_language(site_url, code, path))
        open_menu(page)
        boxes = page.evaluate(MENU_BOXES_JS)
        width = boxes["width"]
        assert 0 <= boxes["button"]["left"] and boxes["button"]["right"] <= width, boxes["button"]
        for entry in boxes["entries"]:
            assert 0 <= entry["left"] and entry["right"] <= width, (
                f"an entry runs off the screen: {entry}"
            )
            assert entry["height"] >= 40, f"an entry is {entry['height']:.0f} px tall"
        other = next(c for c in PUBLISHED if c != code)
        with page.expect_navigation():
            menu_entry(page, HREFLANG[other]).click()
        assert page.url.split("?")[0] == in_language(site_url, other, path)


# ------------------------------------------------------------------------------------ lang and hreflang links

ALTERNATE = re.compile(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)" title="([^"]+)">')
HTML_LANG = re.compile(r"<html[^>]* lang=\"([^\"]+)\"")


def _html_pages(folder: str) -> list[Path]:
    root = SITE_DIR / folder
    redirect = root / "index.html"  # Jupyter Book's redirect to the first page
    return sorted(
        p
        for p in root.glob("**/*.html")
        if "_static" not in p.parts
        and p != redirect
        and (folder or p.relative_to(root).parts[0] not in FOLDERS.values())
    )


@pytest.mark.parametrize("code", [*_language_params(), pytest.param(None, id="en")])
def test_every_page_has_its_lang_and_the_hreflang_links_of_every_language(code: str | None):
    """Every page of the site says its language (``<html lang>``, the BCP 47 code of its ``hreflang``) and links
    the same page in every language, English included, each of which exists."""
    folder = FOLDERS[code] if code else ""
    pages = _html_pages(folder)
    assert pages, f"no page under {SITE_DIR / folder}"
    own = HREFLANG[code] if code else "en"
    expected = [("en", "English")] + [(HREFLANG[c], LANGUAGES[c]) for c in PUBLISHED]
    problems = []
    for path in pages:
        text = path.read_text("utf-8")
        where = path.relative_to(SITE_DIR).as_posix()
        lang = HTML_LANG.search(text)
        if not lang or lang.group(1) != own:
            problems.append(f"{where}: <html lang={lang and lang.group(1)!r}>, not {own!r}")
        links = ALTERNATE.findall(text)
        if [(hreflang, html.unescape(title)) for hreflang, _, title in links] != expected:
            problems.append(f"{where}: hreflang links {links}")
            continue
        for hreflang, href, _ in links:
            target = (path.parent / href).resolve()
            if not target.is_file():
                problems.append(f"{where}: the {hreflang} link {href} leads nowhere")
            elif hreflang == own and target != path.resolve():
                problems.append(f"{where}: its own language's link is {href}, not the page")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("code", _language_params())
def test_every_page_names_its_licence_in_the_language(code: str):
    """The footer of every page of the language says, in the language, that the text and code are under the MIT
    License (booktools' own words, locales/<language>/LC_MESSAGES/booktools.po)."""
    english = "Text and code under the MIT License (the LICENSE file of the book's repository)."
    words = gettext_function(code)(english)
    assert words != english, f"booktools.po of {code} does not translate the licence"
    footer = f'class="d2l-licence">{html.escape(words, quote=False)}</p>'
    pages = _html_pages(FOLDERS[code])
    assert pages, f"no page under {SITE_DIR / FOLDERS[code]}"
    missing = [
        p.relative_to(SITE_DIR).as_posix() for p in pages if footer not in p.read_text("utf-8")
    ]
    assert not missing, f"pages without the licence in {LANGUAGES[code]}: {missing}"


# ------------------------------------------------------------------------------- no English paragraph left

# Every paragraph, list item and heading of the article a reader can see, with every dropdown open and every tab's
# panel shown, outside code cells (their source and outputs) and what the API reference renders of d2lcore's
# docstrings (class d2l-api, booktools/api.py), which stays English by design; a list item counts by its own text,
# the paragraphs in it on their own. For each: its text, and its text without inline code and math (what is left to
# translate).
ARTICLE_TEXTS_JS = """async () => {
    await window.MathJax?.startup?.promise;
    document.querySelectorAll("article.bd-article details").forEach(d => { d.open = true; });
    const style = document.createElement("style");
    style.textContent = ".sd-tab-set > .sd-tab-content { display: block !important; }";
    document.head.append(style);
    document.querySelectorAll("article.bd-article .headerlink").forEach(a => a.remove());
    const clean = text => text.replace(/\\s+/g, " ").trim();
    const blocks = Array.from(document.querySelectorAll(
        "article.bd-article :is(p, li, h1, h2, h3, h4, h5, h6)"
    )).filter(el => !el.closest("div.cell, dl.py, .d2l-api, pre")
        && !(el.matches("li") && el.querySelector(":scope > :is(p, ul, ol, div, dl)"))
        && el.checkVisibility({visibilityProperty: true}));
    const found = blocks.map(el => ({tag: el.tagName.toLowerCase(), text: clean(el.innerText)}));
    document.querySelectorAll("article.bd-article :is(code, .math, mjx-container, span.d2l-per-framework)")
        .forEach(el => el.remove());
    blocks.forEach((el, i) => { found[i].prose = clean(el.innerText); });
    return found.filter(item => item.text);
}"""

MIN_LENGTH = 25
# A bibliographic reference: its authors ("Vaswani, A., Shazeer, N., ..."), year and title name people and works.
REFERENCE = re.compile(r"^[^\W\d_][\w'’ -]*, (?:[^\W\d_]\.[ -]?)+")
WORD = re.compile(r"[^\W\d_]+")
_english_texts: dict[str, set[str]] = {}


# What the text check does without: MathJax (its input, the TeX, is compared instead) and images.
NOT_FOR_TEXT = re.compile(r".*(/mathjax/.*|\.(png|svg|jpe?g|gif)(\?.*)?)$")


def article_texts(page: Page, url: str) -> list[dict]:
    page.goto(url, wait_until="load")
    return page.evaluate(ARTICLE_TEXTS_JS)


def only_names_numbers_or_code(item: dict) -> bool:
    """Nothing to translate: no word is left besides inline code and math, or (outside headings, whose English
    words are capitalised) every word is capitalised: names."""
    words = WORD.findall(item["prose"])
    if not words:
        return True
    return not item["tag"].startswith("h") and all(w[0].isupper() for w in words)


def untranslated(texts: list[dict], english: set[str]) -> list[str]:
    return [
        f"{item['tag']}: {item['text'][:120]!r}"
        for item in texts
        if item["text"] in english
        and len(item["text"]) >= MIN_LENGTH
        and not only_names_numbers_or_code(item)
        and not REFERENCE.match(item["text"])
    ]


@pytest.mark.parametrize("code,path", _page_params())
def test_no_english_paragraph_is_visible(
    browser: Browser, site_url: str, code: str, path: str | None
):
    """No paragraph, list item or heading that a reader of the language sees (dropdowns opened, every tab) has the
    text of one on the English page, unless it is short (under MIN_LENGTH characters), holds only names, numbers,
    inline code or math, or is a bibliographic reference. Fails until the page's translation is complete."""
    path = _require(path, code)
    with sized_page(browser, site_url, WIDE_VIEWPORT) as page:
        page.route(NOT_FOR_TEXT, lambda route: route.abort())
        if path not in _english_texts:
            english = article_texts(page, in_language(site_url, None, path))
            _english_texts[path] = {item["text"] for item in english}
        texts = article_texts(page, in_language(site_url, code, path))
    assert texts, f"{path} ({code}): no text found"
    left = untranslated(texts, _english_texts[path])
    assert not left, (
        f"{FOLDERS[code]}/{path}: {len(left)} English paragraphs, list items or headings:\n"
        + "\n".join(left[:15])
    )


def test_the_english_paragraph_check_flags_english_only():
    """The check above flags English prose and headings, and leaves alone short texts, names and numbers, inline
    code and math, and bibliographic references."""

    def item(tag, text, prose=None):
        return {"tag": tag, "text": text, "prose": text if prose is None else prose}

    texts = [
        item("p", "A paragraph that nobody has translated yet."),
        item("h2", "Position-Wise Feed-Forward Networks"),
        item("li", "MXNet 1.9.1, PyTorch 2.5.1, TensorFlow 2.18.0"),
        item("p", "Short, but English."),
        item("p", "masked_softmax(X, valid_lens) = 0.25", prose=" = 0.25"),
        item("li", "Vaswani, A., Shazeer, N., et al. (2017). Attention is all you need. NeurIPS."),
        item("p", "Абзац, переведенный на русский язык."),
    ]
    english = {t["text"] for t in texts[:-1]}
    assert untranslated(texts, english) == [
        "p: 'A paragraph that nobody has translated yet.'",
        "h2: 'Position-Wise Feed-Forward Networks'",
    ]


# -------------------------------------------------------------------------------- tabs and remembered choice


def _stored(page: Page) -> str | None:
    return page.evaluate(f"() => localStorage.getItem({json.dumps(STORAGE_KEY)})")


@pytest.mark.parametrize("code", _language_params())
def test_tabs_switch_and_are_remembered_across_pages_and_languages(
    page: Page, site_url: str, code: str
):
    """In the language, choosing a framework switches every tab-set of the page; the choice holds on its other
    pages, on the English pages and in every other language (one origin, one localStorage entry), and
    ``?framework=`` overrides it everywhere and becomes the remembered choice."""
    assert len(TAB_PAGES) >= 2, "two pages with code tabs are needed"
    first, second = TAB_PAGES[:2]
    page.goto(in_language(site_url, code, first))
    expect_framework_selected(page, "mxnet")  # the default
    select_framework(page, "tensorflow")
    expect_framework_selected(page, "tensorflow")
    origin = page.evaluate("location.origin")
    for other, path in [
        (code, second),
        (None, first),
        *[(c, second) for c in PUBLISHED if c != code],
    ]:
        page.goto(in_language(site_url, other, path))
        assert page.evaluate("location.origin") == origin
        assert _stored(page) == "tensorflow", page.url
        expect_framework_selected(page, "tensorflow")
    page.goto(in_language(site_url, code, second) + f"?{SYNC_GROUP}=pytorch")
    expect_framework_selected(page, "pytorch")
    for other in (None, *PUBLISHED):
        page.goto(in_language(site_url, other, first))
        assert _stored(page) == "pytorch", page.url
        expect_framework_selected(page, "pytorch")


# --------------------------------------------------------------------------------------- Colab and downloads


def _visible_colab(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "a.d2l-colab",
        "links => links.filter(a => a.checkVisibility()).map(a => a.dataset.framework)",
    )


def _markdown_after_setup(notebook: dict) -> str:
    cells = notebook["cells"]
    assert "d2l-setup" in cells[0]["metadata"].get("tags", []), (
        "the notebook does not start with its setup"
    )
    return next("".join(c["source"]) for c in cells[1:] if c["cell_type"] == "markdown")


def _code_cells(notebook: dict) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("code,path", _page_params("d2l-downloads"))
def test_colab_links_and_downloads_are_the_languages(
    page: Page, context: BrowserContext, site_url: str, code: str, path: str | None
):
    """A page's Colab links open the language's notebooks as published on the notebooks branch
    (<branch>/<folder>/<framework>/<page>.ipynb), the one of the selected framework shown; its download links
    serve those notebooks, whose markdown is in the language (the first markdown cell after the setup cell is
    not the English one) and whose code cells are the English notebook's."""
    path = _require(path, code)
    folder = FOLDERS[code]
    repository, branch = _colab_config()
    docname = PurePosixPath(path).with_suffix("").as_posix()
    page.goto(in_language(site_url, code, path))
    colab = page.locator("p.d2l-colab-links a.d2l-colab")
    expect(colab).to_have_count(len(FRAMEWORKS))
    downloads = page.locator("p.d2l-downloads a.d2l-download")
    expect(downloads).to_have_count(len(FRAMEWORKS))
    for link, download, framework in zip(colab.all(), downloads.all(), FRAMEWORKS, strict=True):
        assert link.get_attribute("href") == (
            f"https://colab.research.google.com/github/{repository}/blob/{branch}/{folder}/{framework}/"
            f"{docname}.ipynb"
        )
        url = download.evaluate("a => a.href")
        assert url == f"{site_url}{folder}/notebooks/{framework}/{docname}.ipynb"
        response = context.request.get(url)
        assert response.status == 200, f"{url}: HTTP {response.status}"
        notebook = json.loads(response.body())
        english = json.loads(
            context.request.get(f"{site_url}notebooks/{framework}/{docname}.ipynb").body()
        )
        assert notebook["metadata"]["d2l"]["language"] == code, url
        assert notebook["metadata"]["d2l"]["framework"] == framework, url
        assert _code_cells(notebook) == _code_cells(english), (
            f"{url}: code cells differ from English"
        )
        assert _markdown_after_setup(notebook) != _markdown_after_setup(english), (
            f"{url}: its first markdown cell is the English one:\n{_markdown_after_setup(notebook)[:200]}"
        )
    page.wait_for_function("() => document.querySelectorAll('a.d2l-colab[hidden]').length === 2")
    assert _visible_colab(page) == ["mxnet"]
    if page.locator(CODE_TAB_SETS).count():
        select_framework(page, "pytorch")
        expect(page.locator('a.d2l-colab[data-framework="pytorch"]')).to_be_visible()
        assert _visible_colab(page) == ["pytorch"]
    with page.expect_download() as download_info:
        downloads.first.click()
    assert download_info.value.suggested_filename == f"{PurePosixPath(docname).name}-mxnet.ipynb"


# ------------------------------------------------------------------------------------------------------ search

# A word of each language that its pages use, to search for.
SEARCH_WORDS = {"ru": "внимание", "tr": "dikkat", "zh_CN": "注意力"}
SCRIPTS = {"ru": r"[а-яё]", "tr": r"[a-zçğıöşü]", "zh_CN": r"[\u4e00-\u9fff]"}


def _index_terms(folder: str) -> dict:
    text = (SITE_DIR / folder / "searchindex.js").read_text("utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return index["terms"]


@pytest.mark.parametrize("code", _language_params())
def test_search_finds_a_page_for_a_word_of_the_language(page: Page, site_url: str, code: str):
    """The language's search index holds its words (for Chinese, words that jieba cut out of the text: without it
    Sphinx indexes no Chinese at all), and searching the language's site for one of its words lists pages of that
    site, one of which has the word in its text."""
    folder, word = FOLDERS[code], SEARCH_WORDS[code]
    terms = _index_terms(folder)
    own = [t for t in terms if re.search(SCRIPTS[code], t)]
    assert len(own) >= 200, (
        f"{folder}/searchindex.js has {len(own)} terms of the language: {own[:20]}"
    )
    if code == "zh_CN":
        assert word in terms, f"{word!r} is not a term of {folder}/searchindex.js"
    page.goto(f"{site_url}{folder}/search.html?q={word}")
    results = page.locator("#search-results ul.search li a")
    expect(results.first).to_be_visible(timeout=30_000)
    hrefs = results.evaluate_all("links => links.map(a => a.href)")
    assert all(h.startswith(f"{site_url}{folder}/") for h in hrefs), hrefs
    pages = {h.split("#")[0].split("?")[0] for h in hrefs}
    containing = [
        p
        for p in pages
        if word.lower() in (SITE_DIR / p.removeprefix(site_url)).read_text("utf-8").lower()
    ]
    assert containing, (
        f"searching {folder} for {word!r} listed {sorted(pages)}, none of which contains it"
    )


# ------------------------------------------------------------------------------------------ the copy buttons


@pytest.mark.parametrize("code", _language_params())
def test_copy_buttons_speak_the_language(page: Page, site_url: str, code: str):
    """sphinx-copybutton's tooltip on a code cell is the theme catalogue's word (booktools/static/d2l.js), not
    its English "Copy"; copying says "Copied!" in the language too."""
    words = catalogue(code, THEME_WORDS)
    assert words.get("Copy") and words.get("Copied!"), (
        f"{code}: the theme catalogue lacks the copy words"
    )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(in_language(site_url, code, "chapters/attention/transformer.html"), wait_until="load")
    button = page.locator("div.cell_input button.copybtn").first
    expect(button).to_have_attribute("data-tooltip", words["Copy"])
    button.dispatch_event("click")
    expect(button).to_have_attribute("data-tooltip", words["Copied!"])


@pytest.mark.parametrize("code", _language_params())
def test_the_themes_sidebar_words_speak_the_language(page: Page, site_url: str, code: str):
    """sphinx-book-theme writes its sidebar buttons' tooltips and its navigation's label in English whatever the
    language; the page shows the theme catalogue's words instead (booktools/static/d2l.js)."""
    words = catalogue(code, THEME_WORDS)
    page.goto(in_language(site_url, code, "chapters/attention/transformer.html"), wait_until="load")
    for selector, text in [
        ("button.primary-toggle", "Toggle primary sidebar"),
        ("button.secondary-toggle", "Toggle secondary sidebar"),
    ]:
        button = page.locator(selector).first
        expect(button).to_have_attribute("aria-label", words[text])
        title = button.evaluate("b => b.getAttribute('data-bs-original-title') || b.title")
        assert title == words[text], (code, selector, title)
    expect(page.locator("nav.bd-docs-nav")).to_have_attribute("aria-label", words["Main"])


# ------------------------------------------------------------------------------------------ JavaScript errors


@pytest.mark.parametrize("code", _language_params())
def test_no_javascript_errors(context: BrowserContext, site_url: str, code: str):
    """Every chapter page, the search page and the index of the language load without JavaScript errors other than
    the one Jupyter Book raises on every page (tests/test_browser.py)."""
    folder = FOLDERS[code]
    paths = [*_pages(folder), "search.html", "genindex.html"]
    assert len(paths) > 2, f"no page under {SITE_DIR / folder / 'chapters'}"
    unexpected = []
    for path in paths:
        page = context.new_page()
        errors = collect_errors(page, site_url)
        page.goto(in_language(site_url, code, path), wait_until="load")
        page.evaluate("() => window.MathJax?.startup?.promise")
        unexpected += [f"{path}: {e}" for e in errors if not is_known_error(e)]
        page.close()
    assert not unexpected, f"{folder} raised JavaScript errors:\n" + "\n".join(unexpected)
