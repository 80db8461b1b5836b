"""Browser tests of the built book: framework tabs, their persistence, notebook downloads, JavaScript errors.

They drive Debian's Chromium through Playwright against the built site in `_build/html` (run `make html` first),
served over HTTP on an ephemeral port. Set D2L_SITE_DIR to test another copy of the built site instead.

The pages are discovered from the build, so new sections are covered without editing this file.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import threading
import zipfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path, PurePosixPath

import pytest
import yaml
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Locator,
    Page,
    expect,
    sync_playwright,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from booktools.i18n import FOLDERS

pytestmark = pytest.mark.browser

DEFAULT_SITE_DIR = Path(__file__).resolve().parent.parent / "_build" / "html"
SITE_DIR = Path(os.environ.get("D2L_SITE_DIR") or DEFAULT_SITE_DIR)
LANGUAGE_FOLDERS = frozenset(FOLDERS.values())  # the other languages' sites, under SITE_DIR

FRAMEWORKS = ("mxnet", "pytorch", "tensorflow")
LABELS = {"mxnet": "MXNet", "pytorch": "PyTorch", "tensorflow": "TensorFlow"}
EXTRAS = {
    "mxnet": "mxnet",
    "pytorch": "torch",
    "tensorflow": "tensorflow",
}  # pip install "d2lcore[<extra>]"
SYNC_GROUP = "framework"

# Every Jupyter Book 1 page declares THEBE_JS_URL twice and so raises one error of its own; nothing else is tolerated.
KNOWN_ERROR = "THEBE_JS_URL"

CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright's own browser download is never used
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Every framework tab-set, code or prose: a sphinx-design tab-set whose labels carry the framework sync data.
SYNCED_TAB_SETS = f'div.sd-tab-set:has(> label.sd-tab-label[data-sync-group="{SYNC_GROUP}"])'
CODE_TAB_SETS = "div.sd-tab-set.d2l-framework-tabs"


# --------------------------------------------------------------------------------------------- page discovery


def _chapter_pages(marker: str = "") -> list[str]:
    """The HTML pages under chapters/ (paths relative to the site root) whose source contains `marker`."""
    root = SITE_DIR / "chapters"
    if not root.is_dir():
        return []
    return sorted(
        path.relative_to(SITE_DIR).as_posix()
        for path in root.rglob("*.html")
        if marker in path.read_text(encoding="utf-8", errors="replace")
    )


ALL_PAGES = _chapter_pages()
TAB_PAGES = _chapter_pages("d2l-framework-tabs")
TABBED_PAGES = _chapter_pages("sd-tab-set")  # any tab-set, code or prose
# Pages built from notebooks: those with code tabs must offer downloads, and so must any other page that has them.
DOWNLOAD_PAGES = sorted(set(TAB_PAGES) | set(_chapter_pages("d2l-downloads")))


def _in_another_language(path: Path) -> bool:
    """Whether ``path`` is a page of another language's site, _build/html/<folder>/ (tests/test_browser_languages.py
    covers those): this suite covers the English pages only."""
    return path.relative_to(SITE_DIR).parts[0] in LANGUAGE_FOLDERS


def _params(pages: list[str]) -> list:
    """Parametrize over `pages`; with none found, one placeholder run that fails in `_require` (never silently)."""
    params = [pytest.param(page, id=page) for page in pages]
    return params or [pytest.param(None, id="no-pages-found")]


def _require(page: str | None) -> str:
    assert page is not None, f"no matching page was found under {SITE_DIR / 'chapters'}"
    return page


# ------------------------------------------------------------------------------------------------- fixtures


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging every request to stderr."""

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    """The built site served over HTTP on 127.0.0.1; yields its base URL (ending with a slash)."""
    if not (SITE_DIR / "index.html").is_file():
        pytest.fail(f"{SITE_DIR / 'index.html'} is missing: run `make html` first", pytrace=False)
    handler = functools.partial(_QuietHandler, directory=str(SITE_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless (Playwright never downloads a browser here)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_context(browser: Browser, site_url: str) -> BrowserContext:
    """A fresh browser context (empty localStorage) that stays offline: it only reaches the local server.

    Off-site requests (the MathJax CDN, say) are aborted, so results never depend on the network. The browser's own
    request for /favicon.ico (the book declares no icon) is answered with an empty response unless the site has one.
    """
    context = browser.new_context()
    context.set_default_timeout(15_000)
    context.route(lambda url: not url.startswith(site_url), lambda route: route.abort())
    if not (SITE_DIR / "favicon.ico").exists():
        context.route(site_url + "favicon.ico", lambda route: route.fulfill(status=204))
    return context


@contextlib.contextmanager
def sized_page(browser: Browser, site_url: str, viewport: dict) -> Iterator[Page]:
    """A page of a fresh offline context (new_context) at ``viewport``, with a long timeout: long pages with many
    figures, on a busy machine. The context closes afterwards."""
    context = new_context(browser, site_url)
    try:
        page = context.new_page()
        page.set_viewport_size(viewport)
        page.set_default_timeout(60_000)
        yield page
    finally:
        context.close()


@pytest.fixture
def context(browser: Browser, site_url: str) -> Iterator[BrowserContext]:
    """A fresh browser context per test, so localStorage starts empty."""
    context = new_context(browser, site_url)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


# -------------------------------------------------------------------------------------------------- helpers


# The state of every tab-set matched by a selector: the frameworks of its checked radio inputs and visible panels.
# A tab-set inside a closed dropdown (a solution the reader has not opened) is hidden as a whole; there a panel
# counts as visible when the tab-set's own style shows it, which is what the reader sees on opening the dropdown.
TAB_STATES_JS = """selector => Array.from(document.querySelectorAll(selector), set => {
    const closed = !!set.closest("details:not([open])");
    const shown = panel => closed
        ? getComputedStyle(panel).display !== "none"
        : panel.checkVisibility({visibilityProperty: true});
    return {
        checked: Array.from(set.querySelectorAll(":scope > input[type=radio]"))
            .filter(input => input.checked)
            .map(input => input.nextElementSibling?.dataset.syncId ?? "<input without its label>"),
        visible: Array.from(set.querySelectorAll(":scope > label.sd-tab-label"))
            .filter(label => label.nextElementSibling?.matches(".sd-tab-content") && shown(label.nextElementSibling))
            .map(label => label.dataset.syncId ?? "<label without sync id>"),
    };
})"""

SHOWS_ONLY_JS = f"""([selector, framework]) => {{
    const states = ({TAB_STATES_JS})(selector);
    return states.length > 0 && states.every(s => s.checked.join() === framework && s.visible.join() === framework);
}}"""

# Per code tab-set: for each framework's panel, its code blocks (how many, how many visible) and its source code
# (the `pre` blocks outside cell outputs); and the text the reader sees in the whole tab-set.
CODE_TAB_SETS_JS = """selector => Array.from(document.querySelectorAll(selector), set => ({
    panels: Object.fromEntries(Array.from(set.querySelectorAll(":scope > label.sd-tab-label"), label => {
        const panel = label.nextElementSibling;
        if (!panel?.matches(".sd-tab-content")) return [label.dataset.syncId, null];
        const blocks = Array.from(panel.querySelectorAll("div.highlight, pre"));
        // cells tagged hide-cell (the solutions of exercises) stay closed until the reader opens them
        const closed = blocks.filter(block => block.closest("details:not([open])"));
        return [label.dataset.syncId, {
            blocks: blocks.length,
            // a framework with no cell in this run: booktools.sphinx_ext says so in its panel
            nothing_needed: panel.textContent.trim() === `No ${label.textContent.trim()} code is needed here.`,
            closed_blocks: closed.length,
            visible_blocks: blocks.filter(block => block.checkVisibility({visibilityProperty: true})).length,
            code: Array.from(panel.querySelectorAll("pre"))
                .filter(pre => !pre.closest(".cell_output"))
                .map(pre => pre.textContent)
                .join("\\n"),
        }];
    })),
    seen: set.innerText,
}))"""


def tab_label(tab_set: Locator, framework: str) -> Locator:
    return tab_set.locator(f':scope > label.sd-tab-label[data-sync-id="{framework}"]')


def select_framework(page: Page, framework: str) -> None:
    """Choose `framework` the way a reader does: click its label in the page's first code tab-set."""
    tab_label(page.locator(CODE_TAB_SETS).first, framework).click()


def expect_framework_selected(page: Page, framework: str) -> None:
    """Every framework tab-set on the page shows `framework`: only its radio input is checked, only its panel visible.

    Waits (briefly) for that state, then asserts on a snapshot of all tab-sets, which names the ones that differ.
    """
    try:
        page.wait_for_function(SHOWS_ONLY_JS, arg=[SYNCED_TAB_SETS, framework], timeout=5_000)
    except PlaywrightTimeoutError:
        pass  # the assertions below say what is wrong
    states = page.evaluate(TAB_STATES_JS, SYNCED_TAB_SETS)
    assert states, f"{page.url} has no framework tab-set"
    expected = {"checked": [framework], "visible": [framework]}
    wrong = {f"tab-set {i}": state for i, state in enumerate(states) if state != expected}
    assert not wrong, f"{page.url}: expected {expected} in every tab-set, but: {wrong}"


def code_lines(code: str) -> set[str]:
    return {line.strip() for line in code.splitlines() if line.strip()}


def collect_errors(page: Page, site_url: str) -> list[str]:
    """Start recording the page's uncaught exceptions and console errors; returns the (growing) list.

    Off-site loads are aborted by the context (see `new_context`), so the browser's report of such a failed load
    is not the page's error and is left out; every other console error, including a failed on-site load, is kept.
    """
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        source = message.location.get("url") or ""
        if message.type != "error":
            return
        if message.text.startswith("Failed to load resource") and not source.startswith(site_url):
            return
        errors.append(f"console error: {message.text} ({source})")

    page.on("pageerror", lambda error: errors.append(f"uncaught exception: {error}"))
    page.on("console", on_console)
    return errors


def visit_for_errors(page: Page, site_url: str, path: str) -> list[str]:
    """Load `path` (following index.html's redirect), let it settle, and return every error it raised."""
    errors = collect_errors(page, site_url)
    page.goto(site_url + path)
    if path == "index.html":
        page.wait_for_url(lambda url: not url.endswith("/index.html"))
    page.wait_for_load_state("networkidle")
    return errors


def is_known_error(error: str) -> bool:
    return KNOWN_ERROR in error


# ---------------------------------------------------------------------------------------------------- tests


def test_site_has_framework_tab_pages():
    where = SITE_DIR / "chapters"
    assert TAB_PAGES, f"no page under {where} has framework tabs (div.d2l-framework-tabs)"


@pytest.mark.parametrize("path", _params(TAB_PAGES))
def test_choosing_a_framework_switches_every_tab_set(page: Page, site_url: str, path: str | None):
    page.goto(site_url + _require(path))
    # MXNet is the default, so the click below has something to change.
    expect_framework_selected(page, "mxnet")
    select_framework(page, "tensorflow")
    expect_framework_selected(page, "tensorflow")


def test_choice_persists_across_pages_and_reloads(page: Page, site_url: str):
    first, *others = _require(TAB_PAGES[0] if TAB_PAGES else None), *TAB_PAGES[1:]
    # With a single tabbed page, load it again under another URL (a query string forces a real page load).
    next_paths = others or [f"{first}?persistence-check=1"]

    page.goto(site_url + first)
    select_framework(page, "tensorflow")
    expect_framework_selected(page, "tensorflow")

    for path in next_paths:
        page.goto(site_url + path)
        expect_framework_selected(page, "tensorflow")
    page.reload()
    expect_framework_selected(page, "tensorflow")


@pytest.mark.parametrize("path", _params(TAB_PAGES))
def test_query_parameter_overrides_stored_choice(page: Page, site_url: str, path: str | None):
    path = _require(path)
    page.goto(site_url + path)
    for framework in ("mxnet", "pytorch"):
        # TensorFlow is stored in localStorage, and so chosen on the next load, unless the URL names another.
        select_framework(page, "tensorflow")
        expect_framework_selected(page, "tensorflow")
        page.goto(f"{site_url}{path}?{SYNC_GROUP}={framework}")
        expect_framework_selected(page, framework)


@pytest.mark.parametrize("path", _params(TABBED_PAGES))
def test_every_tab_set_offers_the_three_frameworks_in_order(
    page: Page, site_url: str, path: str | None
):
    page.goto(site_url + _require(path))
    tab_sets = page.eval_on_selector_all(
        "div.sd-tab-set",
        """sets => sets.map(set => ({
            labels: Array.from(set.querySelectorAll(":scope > label.sd-tab-label")).map(label => ({
                text: label.textContent.trim(),
                group: label.dataset.syncGroup ?? null,
                id: label.dataset.syncId ?? null,
            })),
            inputs: set.querySelectorAll(":scope > input[type=radio]").length,
            panels: set.querySelectorAll(":scope > div.sd-tab-content").length,
        }))""",
    )
    expected_labels = [{"text": LABELS[fw], "group": SYNC_GROUP, "id": fw} for fw in FRAMEWORKS]
    for i, tab_set in enumerate(tab_sets):
        assert tab_set["labels"] == expected_labels, f"tab-set {i} on {path}"
        assert (tab_set["inputs"], tab_set["panels"]) == (3, 3), (
            f"tab-set {i} on {path}: inputs and panels"
        )


@pytest.mark.parametrize("path", _params(DOWNLOAD_PAGES))
def test_notebook_downloads(page: Page, context: BrowserContext, site_url: str, path: str | None):
    path = _require(path)
    docname = PurePosixPath(path).with_suffix("").as_posix()
    page.goto(site_url + path)
    links = page.locator("p.d2l-downloads a.d2l-download")
    expect(links).to_have_count(len(FRAMEWORKS))

    for link, framework in zip(links.all(), FRAMEWORKS, strict=True):
        assert link.get_attribute("data-framework") == framework
        expect(link).to_have_text(LABELS[framework])
        expect(link).to_be_visible()
        assert link.get_attribute("download") is not None, (
            f"{framework} link on {path} lacks the download attribute"
        )
        href = link.get_attribute("href") or ""
        assert not href.startswith(("/", "http:", "https:")), (
            f"{framework} link on {path} is not relative: {href}"
        )
        url = link.evaluate("a => a.href")
        assert url == f"{site_url}notebooks/{framework}/{docname}.ipynb"

        response = context.request.get(url)
        assert response.status == 200, f"{url}: HTTP {response.status}"
        notebook = json.loads(response.body())
        assert notebook["nbformat"] == 4, url
        assert notebook["cells"], f"{url} has no cells"
        metadata = notebook["metadata"]
        assert metadata["d2l"]["framework"] == framework, url
        assert metadata["kernelspec"]["name"] == "python3", url  # a kernel every Jupyter has
        setup = notebook["cells"][0]
        assert "d2l-setup" in setup["metadata"]["tags"], url
        # until d2lcore is on PyPI, it installs the wheel that the site itself offers, next to the zips
        code = "".join(setup["source"])
        wheel = re.search(
            rf'pip install "d2lcore\[{EXTRAS[framework]}\] @ https://\S+?/(notebooks/d2lcore-[^"]+\.whl)"',
            code,
        )
        assert wheel, f"{url}: the setup cell does not install the site's wheel:\n{code}"
        offered = context.request.get(f"{site_url}{wheel.group(1)}")
        assert offered.status == 200 and offered.body()[:2] == b"PK", (
            f"{wheel.group(1)}: not on the site"
        )
        assert PurePosixPath(metadata["d2l"]["source"]).with_suffix("").as_posix() == docname, url

        # The browser saves the notebook instead of opening it.
        with page.expect_download() as download_info:
            link.click()
        assert (
            download_info.value.suggested_filename
            == f"{PurePosixPath(docname).name}-{framework}.ipynb"
        )


def _colab_config() -> tuple[str, str]:
    """The repository and notebooks branch the site was built with (the staged _config.yml of the build)."""
    staged = SITE_DIR.parent / "site" / "_config.yml"
    assert staged.is_file(), (
        f"{staged} is missing: the browser tests need the site built by `make html`"
    )
    config = yaml.safe_load(staged.read_text(encoding="utf-8"))["sphinx"]["config"]
    repository, branch = config.get("d2l_repository"), config.get("d2l_notebooks_branch")
    assert repository and branch, (
        f"the site was built without a repository for its Colab links ({staged}); `make test` builds it with "
        "D2L_REPOSITORY set"
    )
    return repository, branch


def visible_colab_links(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "a.d2l-colab",
        "links => links.filter(a => a.checkVisibility()).map(a => a.dataset.framework)",
    )


@pytest.mark.parametrize("path", _params(DOWNLOAD_PAGES))
def test_open_in_colab_follows_the_framework_tabs(
    page: Page, context: BrowserContext, site_url: str, path: str | None
):
    """One "Open in Colab" link per framework, pointing at the notebook the workflow publishes on the notebooks
    branch (the same file the page's download link serves); only the selected framework's link shows."""
    path = _require(path)
    repository, branch = _colab_config()
    docname = PurePosixPath(path).with_suffix("").as_posix()
    page.goto(site_url + path)
    links = page.locator("p.d2l-colab-links a.d2l-colab")
    expect(links).to_have_count(len(FRAMEWORKS))
    for link, framework in zip(links.all(), FRAMEWORKS, strict=True):
        assert link.get_attribute("data-framework") == framework
        assert link.get_attribute("href") == (
            f"https://colab.research.google.com/github/{repository}/blob/{branch}/{framework}/{docname}.ipynb"
        )
        # the published branch holds the site's notebooks/ folder: the file must exist there
        response = context.request.get(f"{site_url}notebooks/{framework}/{docname}.ipynb")
        assert response.status == 200, f"{framework} notebook of {path}: HTTP {response.status}"

    page.wait_for_function("() => document.querySelectorAll('a.d2l-colab[hidden]').length === 2")
    assert visible_colab_links(page) == ["mxnet"]  # the default tab
    for framework in ("pytorch", "tensorflow", "mxnet"):
        select_framework(page, framework)
        expect(page.locator(f'a.d2l-colab[data-framework="{framework}"]')).to_be_visible()
        assert visible_colab_links(page) == [framework]
    page.goto(f"{site_url}{path}?{SYNC_GROUP}=pytorch")
    expect(page.locator('a.d2l-colab[data-framework="pytorch"]')).to_be_visible()
    assert visible_colab_links(page) == ["pytorch"]


# Pages whose shared prose quotes a figure that differs between the frameworks (booktools/quotes.py)
PER_FRAMEWORK_PAGES = _chapter_pages('class="d2l-per-framework"')


@pytest.mark.parametrize("path", _params(PER_FRAMEWORK_PAGES))
def test_a_differing_figure_in_shared_prose_follows_the_framework_tabs(
    page: Page, site_url: str, path: str | None
):
    """Such a figure shows the value of the framework selected in the tabs only (d2l.js), and follows a switch."""
    page.goto(site_url + _require(path))
    figures = page.locator("span.d2l-per-framework")
    for framework in ("pytorch", "tensorflow", "mxnet"):
        select_framework(page, framework)
        shown = figures.evaluate_all("spans => spans.map(s => s.textContent)")
        expected = figures.evaluate_all(f"spans => spans.map(s => s.dataset.{framework})")
        assert shown == expected, f"{path}, {framework}: shows {shown}, its values are {expected}"


def test_colab_choice_is_remembered_on_the_next_page(page: Page, site_url: str):
    first, second = (DOWNLOAD_PAGES + [None, None])[:2]
    page.goto(site_url + _require(first))
    select_framework(page, "tensorflow")
    page.goto(site_url + _require(second))
    expect(page.locator('a.d2l-colab[data-framework="tensorflow"]')).to_be_visible()
    assert visible_colab_links(page) == ["tensorflow"]


def test_all_notebooks_of_a_framework_as_one_zip(
    page: Page, context: BrowserContext, site_url: str
):
    """The running-locally page links one zip per framework, holding that framework's notebook of every page
    that offers downloads, and nothing else."""
    page.goto(site_url + "chapters/running-locally.html")
    links = page.locator("a.d2l-notebook-zip")
    expect(links).to_have_count(len(FRAMEWORKS))
    expected = {PurePosixPath(p).with_suffix("").as_posix() for p in DOWNLOAD_PAGES}
    assert expected, "no page offers notebook downloads"
    for link, framework in zip(links.all(), FRAMEWORKS, strict=True):
        url = link.evaluate("a => a.href")
        assert url == f"{site_url}notebooks/{framework}.zip"
        response = context.request.get(url)
        assert response.status == 200, f"{url}: HTTP {response.status}"
        with zipfile.ZipFile(BytesIO(response.body())) as zf:
            names = zf.namelist()
            assert {
                PurePosixPath(n).relative_to(framework).with_suffix("").as_posix() for n in names
            } == expected
            for name in names:
                notebook = json.loads(zf.read(name))
                assert notebook["metadata"]["d2l"]["framework"] == framework, name
                # the same file as the page's download link (both are what `make standalone` runs)
                linked = context.request.get(f"{site_url}notebooks/{name}")
                assert linked.status == 200 and linked.body() == zf.read(name), name


@pytest.mark.parametrize("path", _params(ALL_PAGES) + [pytest.param("index.html", id="index.html")])
def test_no_javascript_errors(page: Page, site_url: str, path: str | None):
    errors = visit_for_errors(page, site_url, _require(path))
    unexpected = [error for error in errors if not is_known_error(error)]
    assert not unexpected, f"{path} raised JavaScript errors:\n" + "\n".join(unexpected)


def test_known_error_filter_is_not_stale(browser: Browser, site_url: str):
    """The known-error filter must match a real error, or it may be hiding errors it was never meant for."""
    for path in ALL_PAGES:
        context = new_context(browser, site_url)
        try:
            errors = visit_for_errors(context.new_page(), site_url, path)
        finally:
            context.close()
        if any(is_known_error(error) for error in errors):
            return
    pytest.fail(
        f"no page logged the known {KNOWN_ERROR} error: the known-error filter in {Path(__file__).name} may be "
        "stale (Jupyter Book fixed it?): remove KNOWN_ERROR and its filter",
        pytrace=False,
    )


@pytest.mark.parametrize("path", _params(TAB_PAGES))
def test_only_the_chosen_frameworks_code_is_visible(page: Page, site_url: str, path: str | None):
    path = _require(path)
    page.goto(site_url + path)
    # The default, MXNet, comes last, so that each choice changes something.
    for framework in ("tensorflow", "pytorch", "mxnet"):
        select_framework(page, framework)
        expect_framework_selected(page, framework)
        check_code_tab_sets(page.evaluate(CODE_TAB_SETS_JS, CODE_TAB_SETS), framework, path)


def check_code_tab_sets(tab_sets: list[dict], framework: str, path: str) -> None:
    """Every code tab-set has code in each panel and shows only `framework`'s; one at least differs by framework."""
    assert tab_sets, f"{path} has no code tab-set"
    distinct_code_seen = False
    for i, tab_set in enumerate(tab_sets):
        where = f"tab-set {i} on {path} ({framework} chosen)"
        panels = tab_set["panels"]
        assert sorted(panels) == sorted(FRAMEWORKS), f"{where}: tabs {sorted(panels)}"
        for fw, panel in panels.items():
            assert panel is not None, f"{where}: the {fw} label is not followed by its panel"
            assert panel["blocks"] > 0 or panel["nothing_needed"], (
                f"{where}: the {fw} panel has no rendered code, nor says that none is needed"
            )
            if fw == framework:
                shown = panel["blocks"] - panel["closed_blocks"]
                assert panel["visible_blocks"] == shown, f"{where}: {fw} code is hidden"
            else:
                assert panel["visible_blocks"] == 0, f"{where}: {fw} code is visible"

        if any(panel["closed_blocks"] for panel in panels.values()):
            continue  # a solution's code: the reader has not opened it
        texts = {panel["code"].strip() for panel in panels.values()}
        assert len(texts) > 1, (
            f"{where}: the same code in every tab (show it once, its outputs in tabs)"
        )
        code = {fw: code_lines(panel["code"]) for fw, panel in panels.items()}
        if len({frozenset(lines) for lines in code.values()}) == len(FRAMEWORKS):
            distinct_code_seen = True
            # What the reader sees in this tab-set: the chosen framework's own lines of code, and no other's.
            seen = code_lines(tab_set["seen"])
            for fw in FRAMEWORKS:
                own = code[fw] - set().union(*(code[other] for other in FRAMEWORKS if other != fw))
                if fw == framework:
                    assert own <= seen, f"{where}: {fw} code not shown: {sorted(own - seen)}"
                else:
                    assert not own & seen, f"{where}: {fw} code shown: {sorted(own & seen)}"

    assert distinct_code_seen, f"no code tab-set on {path} has different code for each framework"


# ------------------------------------------------------------------------------------------- fits the screen

WIDE_VIEWPORT = {"width": 1280, "height": 900}

# Every visible code block, text output and display equation whose content is wider than its box, which would make
# the reader scroll sideways or cut it off: [{kind, width, box, text}].
OVERFLOW_JS = """() => {
    const found = [];
    const check = (kind, element, box) => {
        if (!element.checkVisibility({visibilityProperty: true})) return;
        const width = element.scrollWidth, room = box.clientWidth;
        if (width > room + 1) {
            found.push({kind, width, box: room, text: element.textContent.trim().slice(0, 80)});
        }
    };
    for (const pre of document.querySelectorAll("div.cell_input pre")) check("code", pre, pre);
    for (const pre of document.querySelectorAll("div.cell_output pre")) check("output", pre, pre);
    for (const math of document.querySelectorAll("div.math, mjx-container[display='true']")) {
        check("equation", math, math.closest("article") || math.parentElement);
        check("equation", math, math);
    }
    return found;
}"""


MAX_PAGE_HEIGHT = 15_000
"""The tallest a page may be at 1280 px, in any framework's tab, with its dropdowns closed (a longer page is split)."""


@pytest.mark.parametrize("path", _params(ALL_PAGES))
def test_code_outputs_and_equations_fit_at_1280px(
    browser: Browser, site_url: str, path: str | None
):
    """At 1280 px, no code line, text output or display equation of any framework is wider than its column, and
    the page is at most MAX_PAGE_HEIGHT px tall in every framework's tab."""
    path = _require(path)
    with sized_page(browser, site_url, WIDE_VIEWPORT) as page:
        problems = []
        for framework in FRAMEWORKS:
            page.goto(f"{site_url}{path}?framework={framework}", wait_until="load")
            # the equations are measured once MathJax has typeset them
            page.evaluate("() => window.MathJax?.startup?.promise")
            for item in page.evaluate(OVERFLOW_JS):
                problems.append(
                    f"{framework}: {item['kind']} {item['width']} px wide in {item['box']} px: {item['text']!r}"
                )
            height = page.evaluate("document.documentElement.scrollHeight")
            if height > MAX_PAGE_HEIGHT:
                problems.append(
                    f"{framework}: the page is {height:,} px tall, over {MAX_PAGE_HEIGHT:,}: split it"
                )
        problems = list(dict.fromkeys(problems))  # shared cells are found once per framework
        assert not problems, f"{path} does not fit at 1280 px:\n" + "\n".join(problems)


def test_no_record_role_is_left_in_the_site():
    """Prose quotes records through {record}`name.field` roles, which the build fills in (booktools.quotes): none may
    reach a page or a downloadable notebook as text."""
    built = [*SITE_DIR.glob("chapters/**/*.html"), *SITE_DIR.glob("notebooks/*/**/*.ipynb")]
    assert built, f"no built page under {SITE_DIR}"
    left = [
        path.relative_to(SITE_DIR).as_posix()
        for path in built
        if "{record}`" in path.read_text("utf-8")
    ]
    assert not left, f"record roles left unfilled in: {left}"


def test_every_page_names_its_licence():
    """The footer of every page says the text and code are under the MIT License, as LICENSE does."""
    pages = sorted(SITE_DIR.glob("**/*.html"))
    redirect = SITE_DIR / "index.html"  # to the first page
    pages = [
        p
        for p in pages
        if "_static" not in p.parts and p != redirect and not _in_another_language(p)
    ]
    assert pages, f"no built page under {SITE_DIR}"
    missing = [
        p.relative_to(SITE_DIR).as_posix()
        for p in pages
        if 'class="d2l-licence">Text and code under the MIT License' not in p.read_text("utf-8")
    ]
    assert not missing, f"pages without the licence in their footer: {missing}"


def test_sections_are_numbered_and_references_resolve():
    """_toc.yml numbers the sections: the sidebar and the headings show the numbers, and the references by label
    ({ref}, {numref}; booktools/labels.py) became links, on the pages and as plain links in the notebooks."""
    bahdanau = (SITE_DIR / "chapters/attention/bahdanau-attention.html").read_text("utf-8")
    assert re.search(r'<h1>\s*<span class="section-number">5\. </span>Bahdanau Attention', bahdanau)
    assert re.search(r">\s*4\. Sequence-to-Sequence Toolkit\s*</a>", bahdanau)  # the sidebar
    # "with the toolkit of {numref}`sec-seq2seq-toolkit`"
    assert re.search(
        r'href="seq2seq-toolkit.html#sec-seq2seq-toolkit"><span class="std std-numref">'
        r"Section 4</span>",
        bahdanau,
    )
    built = [*SITE_DIR.glob("chapters/**/*.html"), *SITE_DIR.glob("notebooks/*/**/*.ipynb")]
    left = [
        path.relative_to(SITE_DIR).as_posix()
        for path in built
        if re.search(r"\{(num)?ref\}`|\(sec-[\w-]+\)=", path.read_text("utf-8"))
    ]
    assert not left, f"labels or references left as text in: {left}"


# ------------------------------------------------------------------------------------------------------ exercises

EXERCISE_PAGES = _chapter_pages('<section id="exercises">')
SIZES = ("Minutes.", "An hour.", "Project.")

# Each exercise of the page: its size label, and its hints with whether their text shows; the solutions, and the
# code cells under them, with the same.
EXERCISES_JS = """() => {
    const shows = element => element.checkVisibility({visibilityProperty: true});
    const dropdown = details => ({
        title: details.querySelector(":scope > summary").innerText.trim(),
        open: details.open,
        text_visible: shows(details.querySelector(":scope > .sd-summary-content")),
    });
    const exercises = document.querySelector("section#exercises > ol");
    const solutions = document.querySelector("section#solutions");
    return {
        items: Array.from(exercises ? exercises.children : [], item => ({
            size: item.querySelector("strong")?.innerText.trim() ?? "",
            hints: Array.from(item.querySelectorAll("details.sd-dropdown"), dropdown),
        })),
        solutions: Array.from(solutions ? solutions.querySelectorAll("details.sd-dropdown") : [], dropdown),
        solution_code_visible: Array.from(solutions ? solutions.querySelectorAll("div.cell_input pre") : [], shows),
    };
}"""


@pytest.mark.parametrize("path", _params(EXERCISE_PAGES))
def test_exercises_have_a_size_and_a_closed_hint(page: Page, site_url: str, path: str | None):
    """Every exercise starts with its size and has one hint, closed until the reader opens it; solutions and
    their code are closed too. Opening a hint shows its text."""
    path = _require(path)
    page.goto(site_url + path)
    found = page.evaluate(EXERCISES_JS)
    assert found["items"], f"{path}: no numbered list of exercises"
    for n, item in enumerate(found["items"], 1):
        assert item["size"] in SIZES, (
            f"{path}, exercise {n}: size {item['size']!r}, not one of {SIZES}"
        )
        assert [h["title"] for h in item["hints"]] == ["Hint"], (
            f"{path}, exercise {n}: {item['hints']}"
        )
        assert not item["hints"][0]["open"] and not item["hints"][0]["text_visible"], (
            f"{path}, exercise {n}"
        )
    for solution in found["solutions"]:
        assert not solution["open"] and not solution["text_visible"], (
            f"{path}: {solution['title']} is open"
        )
    assert not any(found["solution_code_visible"]), (
        f"{path}: a solution's code shows before it is opened"
    )
    hint = page.locator("section#exercises details.sd-dropdown").first
    hint.locator(":scope > summary").click()
    expect(hint.locator(":scope > .sd-summary-content")).to_be_visible()


# Every code cell of the page: whether it lies in the Solutions section, the title of the sphinx-design dropdown
# (<details class="sd-dropdown">) it lies in, if any, whether it is still a hide-cell toggle ("Show code cell
# content", myst-nb's <details class="hide">), and whether its source was tagged hide-cell or hide-input.
CELLS_JS = """() => Array.from(document.querySelectorAll("article div.cell"), cell => ({
    in_solutions: !!cell.closest("section#solutions"),
    dropdown: cell.closest("details.sd-dropdown")?.querySelector(":scope > summary")?.innerText.trim() ?? null,
    toggle: !!cell.querySelector("details.hide") || !!cell.closest("details.hide"),
    hidden: cell.classList.contains("tag_hide-cell") || cell.classList.contains("tag_hide-input"),
}))"""


@pytest.mark.parametrize("path", _params(EXERCISE_PAGES))
def test_solution_code_lies_inside_its_solution(page: Page, site_url: str, path: str | None):
    """Every code cell of the Solutions section lies inside a "Solution to exercise N" dropdown, and shows as soon
    as the solution is opened: none is a hide-cell toggle of its own. Cells tagged hide-cell or hide-input
    elsewhere on the page keep their toggle."""
    path = _require(path)
    page.goto(site_url + path)
    cells = page.evaluate(CELLS_JS)
    solutions = [c for c in cells if c["in_solutions"]]
    outside = [
        c for c in solutions if not re.fullmatch(r"Solution to exercise \d+", c["dropdown"] or "")
    ]
    assert not outside, f"{path}: {len(outside)} solution cell(s) outside a solution: {outside[:3]}"
    toggles = [c for c in solutions if c["toggle"]]
    assert not toggles, (
        f"{path}: {len(toggles)} solution cell(s) still behind 'Show code cell content'"
    )
    hidden_elsewhere = [c for c in cells if c["hidden"] and not c["in_solutions"]]
    assert all(c["toggle"] for c in hidden_elsewhere), f"{path}: a hidden cell lost its toggle"


def test_hidden_cells_outside_solutions_keep_their_toggle(page: Page, site_url: str):
    """The toolkit page's hidden cells outside its solutions (its _initialize, tagged hide-input) are still
    toggles, outside any dropdown."""
    page.goto(site_url + "chapters/attention/seq2seq-toolkit.html")
    cells = page.evaluate(CELLS_JS)
    hidden = [c for c in cells if c["hidden"] and not c["in_solutions"]]
    assert hidden and all(c["toggle"] and c["dropdown"] is None for c in hidden), hidden


def test_the_first_section_has_worked_solutions():
    """The solutions of the first section: one per exercise, with code that the build executed."""
    html = (SITE_DIR / "chapters" / "attention" / "attention-cues.html").read_text("utf-8")
    solutions = html[html.index('<section id="solutions">') :]
    titles = re.findall(r"Solution to exercise (\d+)", solutions)
    exercises = html[
        html.index('<section id="exercises">') : html.index('<section id="solutions">')
    ]
    assert titles == [str(n) for n in range(1, exercises.count("<li>") + 1)]
    assert solutions.count("tag_hide-cell") >= 6 and "cell_output" in solutions


# ------------------------------------------------------------------------------------------------------ figures

NARROW_VIEWPORT = {"width": 390, "height": 844}

# Drawn figures are at least 300 px wide and 150 px tall: the smallest the book draws, a single heatmap of a few
# rows or a line plot, is 3.2 x 1.9 inches, 307 x 182 px at the browser's 96 px per inch; below that a 10-key
# heatmap gives each key less than 25 px and its 10-point labels crowd. The same floor holds for the diagrams.
MIN_FIGURE_WIDTH = 300
MIN_FIGURE_HEIGHT = 150
FIG_NUMBER = re.compile(r"^Fig\. \d+(\.\d+)*$")
FILE_PATH = re.compile(r"(^|/)[^\s/]+\.(svg|png|jpe?g|gif)$|_images/", re.I)

# Every visible image of the article, with its figure's caption and its rendered and natural sizes; and whether
# the figure sits in a box that scrolls sideways.
FIGURES_JS = """() => Array.from(document.querySelectorAll("article img"))
    .filter(img => img.checkVisibility({visibilityProperty: true}))
    .map(img => {
        const figure = img.closest("figure");
        const box = img.getBoundingClientRect();
        const scroller = figure && getComputedStyle(figure).overflowX;
        return {
            src: img.getAttribute("src"),
            alt: img.getAttribute("alt") || "",
            drawn: !!img.closest("div.cell_output"),
            number: figure?.querySelector("figcaption .caption-number")?.textContent.trim() ?? null,
            caption: figure?.querySelector("figcaption .caption-text")?.textContent.trim() ?? "",
            width: box.width, height: box.height, right: box.right,
            natural: img.naturalWidth,
            natural_height: img.naturalHeight,
            figure_right: figure ? figure.getBoundingClientRect().right : null,
            scrolls: !!figure && (scroller === "auto" || scroller === "scroll"),
        };
    })"""

IMAGES_LOADED_JS = "() => Array.from(document.images).every(img => img.complete)"

# Opens every closed <details> of the article (hints, solutions, hidden cells), so that the figure tests see the
# images a reader sees after opening them too; returns how many it opened.
OPEN_DETAILS_JS = """() => {
    const closed = Array.from(document.querySelectorAll("article details:not([open])"));
    closed.forEach(details => { details.open = true; });
    return closed.length;
}"""


def visible_figures(page: Page, site_url: str, path: str, framework: str) -> list[dict]:
    """The figures of one framework's tab, with every dropdown and hidden cell of the page opened."""
    page.goto(f"{site_url}{path}?framework={framework}", wait_until="load")
    page.evaluate(OPEN_DETAILS_JS)
    page.wait_for_function(IMAGES_LOADED_JS)
    return page.evaluate(FIGURES_JS)


def figure_problems(figures: list[dict], framework: str) -> list[str]:
    """What is wrong with the figures a reader sees at 1280 px in one framework's tab."""
    problems = []
    for fig in figures:
        where = f"{framework}: {fig['number'] or 'figure'} ({fig['src'].rsplit('/', 1)[-1]})"
        if fig["number"] is None or not FIG_NUMBER.match(fig["number"]):
            problems.append(f"{where}: no numbered caption (got {fig['number']!r})")
        if len(fig["caption"].split()) < 3:
            problems.append(f"{where}: caption {fig['caption']!r} says nothing")
        alt = fig["alt"].strip()
        if len(alt.split()) < 3 or FILE_PATH.search(alt):
            problems.append(f"{where}: alt text {alt!r} does not describe the figure")
        if fig["width"] < MIN_FIGURE_WIDTH or fig["height"] < MIN_FIGURE_HEIGHT:
            problems.append(
                f"{where}: rendered {fig['width']:.0f} x {fig['height']:.0f} px, below "
                f"{MIN_FIGURE_WIDTH} x {MIN_FIGURE_HEIGHT}"
            )
        if fig["drawn"] and fig["width"] < fig["natural"] - 1:
            problems.append(f"{where}: shrunk from {fig['natural']} to {fig['width']:.0f} px")
    numbers = [fig["number"] for fig in figures]
    if len(set(numbers)) != len(numbers):
        problems.append(f"{framework}: figure numbers repeat: {numbers}")
    return problems


@pytest.mark.parametrize("path", _params(ALL_PAGES))
def test_figures_are_numbered_captioned_described_and_large_at_1280px(
    browser: Browser, site_url: str, path: str | None
):
    """In every framework's tab, each image of the page, closed dropdowns and hidden cells opened, is a figure with a
    number ("Fig. 3"), a caption and alt text that describes it (not a file name), at least MIN_FIGURE_WIDTH x
    MIN_FIGURE_HEIGHT px; a drawn figure is shown at the size it was drawn, and the numbers are the same in every
    tab."""
    path = _require(path)
    with sized_page(browser, site_url, WIDE_VIEWPORT) as page:
        problems, numbers = [], {}
        for framework in FRAMEWORKS:
            figures = visible_figures(page, site_url, path, framework)
            problems += figure_problems(figures, framework)
            numbers[framework] = [fig["number"] for fig in figures]
        if len({tuple(n) for n in numbers.values()}) > 1:
            problems.append(f"the tabs number their figures differently: {numbers}")
        assert not problems, f"{path}:\n" + "\n".join(dict.fromkeys(problems))


@pytest.mark.parametrize("path", _params(ALL_PAGES))
def test_figures_fit_a_phone_at_390px(browser: Browser, site_url: str, path: str | None):
    """At 390 px, every figure is seen whole: none runs past the screen's edge or scrolls sideways (a figure wider
    than the column shrinks to it), and none is distorted (its height keeps the proportion of its width)."""
    path = _require(path)
    with sized_page(browser, site_url, NARROW_VIEWPORT) as page:
        problems = []
        for framework in FRAMEWORKS:
            for fig in visible_figures(page, site_url, path, framework):
                where = f"{framework}: {fig['number']} ({fig['src'].rsplit('/', 1)[-1]})"
                edge = NARROW_VIEWPORT["width"]
                if fig["right"] > edge + 1 or fig["scrolls"]:
                    problems.append(
                        f"{where}: runs to {fig['right']:.0f} px (scrolls: {fig['scrolls']}), past the "
                        f"{edge} px screen"
                    )
                if fig["natural"] and fig["natural_height"]:
                    expected = fig["width"] * fig["natural_height"] / fig["natural"]
                    if abs(fig["height"] - expected) > 2:
                        problems.append(
                            f"{where}: {fig['width']:.0f} x {fig['height']:.0f} px, distorted (drawn "
                            f"{fig['natural']} x {fig['natural_height']})"
                        )
        assert not problems, f"{path} at 390 px:\n" + "\n".join(dict.fromkeys(problems))


# At 390 px: every visible code block (the cells' source and any code in the prose) and text output that is wider
# than its box; and every visible table, with how far it reaches past the content column and, where it does, how its
# box marks it scrollable: it scrolls sideways and its right edge fades out (a mask) while more lies to the right.
PHONE_CODE_OVERFLOW_JS = """() => {
    const found = [];
    for (const pre of document.querySelectorAll("article pre")) {
        if (!pre.checkVisibility({visibilityProperty: true})) continue;
        const kind = pre.closest("div.cell_output") ? "output" : pre.closest("div.cell_input") ? "code" : "prose code";
        if (pre.scrollWidth > pre.clientWidth + 1) {
            found.push({kind, width: pre.scrollWidth, box: pre.clientWidth,
                        text: pre.textContent.trim().slice(0, 80)});
        }
    }
    return found;
}"""

PHONE_TABLES_JS = """async () => {
    const article = document.querySelector("article.bd-article") || document.querySelector("article");
    const style = getComputedStyle(article), rect = article.getBoundingClientRect();
    const column = Math.min(rect.right - parseFloat(style.paddingRight), window.innerWidth);
    const frame = () => new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const fade = box => {
        const mask = getComputedStyle(box).maskImage || getComputedStyle(box).webkitMaskImage || "none";
        const stop = mask.match(/([\\d.]+)px\\)\\s*$/);
        return mask.includes("gradient") && stop ? parseFloat(stop[1]) : 0;
    };
    const tables = [];
    for (const table of document.querySelectorAll("article table")) {
        if (!table.checkVisibility({visibilityProperty: true})) continue;
        const box = table.parentElement;
        const scrolls = ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
        const item = {
            head: table.querySelector("tr")?.innerText.replace(/\\s+/g, " ").trim().slice(0, 80) ?? "",
            column, right: table.getBoundingClientRect().right, box_right: box.getBoundingClientRect().right,
            scrolls, wider: box.scrollWidth > box.clientWidth + 1, fade_at_start: fade(box), fade_at_end: null,
        };
        if (scrolls && item.wider) {
            box.scrollLeft = box.scrollWidth;
            await frame();
            item.fade_at_end = fade(box);
            box.scrollLeft = 0;
            await frame();
        }
        tables.push(item);
    }
    return tables;
}"""


def phone_table_problems(tables: list[dict], framework: str) -> list[str]:
    """A table fits the content column, or sits in a box within the column that scrolls sideways and marks it: its
    right edge fades while more lies to the right, and not at the table's end (the last column is read whole)."""
    problems = []
    for table in tables:
        where = f"{framework}: table {table['head']!r}"
        if table["right"] <= table["column"] + 1:
            continue
        if not (table["scrolls"] and table["wider"] and table["box_right"] <= table["column"] + 1):
            problems.append(
                f"{where} runs to {table['right']:.0f} px, past the column's {table['column']:.0f} px, and its "
                f"box (to {table['box_right']:.0f} px) does not scroll sideways"
            )
        elif table["fade_at_start"] < 8 or table["fade_at_end"] != 0:
            problems.append(
                f"{where} scrolls sideways with no cue: its right edge fades over {table['fade_at_start']} px at "
                f"the start (8 at least) and {table['fade_at_end']} px at its end (none)"
            )
    return problems


@pytest.mark.parametrize("path", _params(ALL_PAGES))
def test_code_outputs_and_tables_fit_a_phone_at_390px(
    browser: Browser, site_url: str, path: str | None
):
    """At 390 px, in every framework's tab, no code block (source, output or code in the prose) is wider than its box:
    long lines wrap, keeping their indentation, instead of scrolling sideways; and every table fits the content
    column, or scrolls sideways in a box within it that marks it as scrollable."""
    path = _require(path)
    with sized_page(browser, site_url, NARROW_VIEWPORT) as page:
        problems = []
        for framework in FRAMEWORKS:
            page.goto(f"{site_url}{path}?framework={framework}", wait_until="load")
            for item in page.evaluate(PHONE_CODE_OVERFLOW_JS):
                problems.append(
                    f"{framework}: {item['kind']} {item['width']} px wide in {item['box']} px: {item['text']!r}"
                )
            problems += phone_table_problems(page.evaluate(PHONE_TABLES_JS), framework)
        assert not problems, f"{path} at 390 px:\n" + "\n".join(dict.fromkeys(problems))


def test_the_phone_test_sees_code_and_a_wide_table():
    """The 390 px test above checks something: the book has code cells and a table too wide for a phone's column
    (the comparison of transformer-training, nine columns), so that its scrolling cue is exercised."""
    pages = [(SITE_DIR / path).read_text("utf-8") for path in ALL_PAGES]
    assert sum(html.count('<div class="cell_input') for html in pages) >= 50
    assert any("d2l-comparison" in html and html.count("<th") >= 8 for html in pages)


def test_the_book_has_numbered_figures():
    """The figure tests above check something: the built pages hold numbered figures, drawn ones and diagrams."""
    pages = [(SITE_DIR / path).read_text("utf-8") for path in ALL_PAGES]
    assert pages, f"no built page under {SITE_DIR}"
    numbered = sum(html.count('<span class="caption-number">Fig. ') for html in pages)
    drawn = sum(
        html.count('<div class="cell_output docutils container">\n<figure') for html in pages
    )
    assert numbered >= 25 and drawn >= 15, (
        f"{numbered} numbered figures, {drawn} of them in cell outputs"
    )
