"""A Sphinx extension for the book: framework tabs and per-framework notebook downloads.

1. Adjacent code cells tagged ``mxnet``, ``pytorch`` or ``tensorflow`` (myst-nb gives their containers the
   classes ``tag_<framework>``) are wrapped into one sphinx-design tab-set, MXNet | PyTorch | TensorFlow in that
   order, synced in the group ``framework``: sphinx-design (>= 0.8) then switches every tab-set of the page
   together, remembers the choice in the browser's localStorage and reads ``?framework=`` from the URL. A cell
   cannot be nested inside a MyST ``tab-item`` directive, which is why the grouping happens on the parsed tree.
   The copies of a shared cell whose output differs by framework (its code is shown once above them, and their
   input is removed: booktools.merge) make a tab-set of outputs alone, ``d2l-output-tabs``.
2. Every page made from a notebook gets links to its three per-framework notebooks (copied next to the HTML
   under ``notebooks/<framework>/``) and, when a repository is configured (``d2l_repository`` in _config.yml),
   "Open in Colab" links to the same notebooks as published on the branch ``d2l_notebooks_branch`` of that GitHub
   repository. One Colab link per framework; ``d2l.js`` shows the one of the framework selected in the page's
   tabs. The merged notebook, which cannot run, is never offered.
3. Where d2lcore is installed from: until it is on PyPI (``d2l_install_from: site``), the build puts the wheel
   (``_build/dist``, made by ``make dist``) next to the notebook zips, and the setup cell of every notebook the
   site offers installs it from there, ``<site>/notebooks/d2lcore-<version>-py3-none-any.whl``. The site's address
   is ``d2l_site_url``, else the environment variable ``D2L_SITE_URL``, else the GitHub Pages address of
   ``d2l_repository``; with none of them the setup cell names PyPI. ``d2l_install_from: pypi`` names PyPI always.
4. The ``record-table`` directive (:mod:`booktools.comparison`).
5. Figures in framework tabs: a figure that a cell draws differently in each framework has one copy per tab, and
   only the first copy is named and numbered (:mod:`booktools.figures`); the others get the same number.
6. The ``d2l-api`` directive of the API page (:mod:`booktools.api`): every public name's signature and docstring,
   read from its implementation.
7. Solutions with their code: in the source, a ``:::{dropdown} Solution to exercise N`` holds the solution's text
   and its code follows as cells tagged ``hide-cell`` (a cell cannot be nested in a MyST directive), which the
   per-framework notebooks keep as they are. On the site, the cells and framework tab-sets that directly follow
   such a dropdown (up to the first node that is neither) are moved into it, after its text, and lose myst-nb's
   hide-cell toggle ("Show code cell content"): closed, the solution hides its code; opened, it shows it.
8. The prompts of myst-nb's hidden cells ("Show code cell source") in the page's language (booktools.po).
"""

import os
import re
import shutil
import zipfile
from html import escape
from pathlib import Path

import nbformat
from docutils import nodes
from myst_nb.sphinx_ import HideCodeCellNode
from sphinx.locale import _ as sphinx_gettext
from sphinx.locale import get_translation
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_design.shared import create_component, is_component

from booktools import api, comparison, record_role
from booktools.paths import LABELS, LOCALES
from booktools.split import SETUP_TAG, WHEEL, setup_source
from d2lcore.frameworks import FRAMEWORKS

SYNC_GROUP = "framework"
_ = get_translation("booktools")
"""booktools' own words on the pages, from locales/<language>/LC_MESSAGES/booktools.po (booktools.i18n)."""


def _framework(node):
    """The framework of a tagged cell container, or None."""
    if not isinstance(node, nodes.container) or "cell" not in node.get("classes", []):
        return None
    for fw in FRAMEWORKS:
        if f"tag_{fw}" in node["classes"]:
            return fw
    return None


def _tab_set(cells):
    """The tab-set of a run of framework cells: ``d2l-framework-tabs`` where they show code, ``d2l-output-tabs``
    where each shows only the output of the shared code above it (booktools.merge)."""
    outputs_only = all("tag_remove-input" in c["classes"] for c in cells)
    kind = "d2l-output-tabs" if outputs_only else "d2l-framework-tabs"
    tab_set = create_component("tab-set", classes=["sd-tab-set", kind])
    for fw in FRAMEWORKS:
        item = create_component("tab-item", classes=["sd-tab-item"], selected=False)
        label = nodes.rubric(LABELS[fw], LABELS[fw], classes=["sd-tab-label"])
        label["sync_id"], label["sync_group"] = fw, SYNC_GROUP
        content = create_component("tab-content", classes=["sd-tab-content"])
        mine = [c for c in cells if _framework(c) == fw]
        if mine:
            content.extend(mine)
        else:
            text = _("No {framework} code is needed here.").format(framework=LABELS[fw])
            content += nodes.paragraph("", "", nodes.emphasis("", text))
        item += label
        item += content
        tab_set += item
    return tab_set


class FrameworkTabs(SphinxTransform):
    """Group runs of adjacent framework-tagged cells into tab-sets."""

    default_priority = 500

    def apply(self, **kwargs):
        for parent in list(self.document.findall(nodes.Element)):
            children = list(parent.children)
            if not any(_framework(c) for c in children):
                continue
            new, run = [], []
            for child in children + [None]:
                if child is not None and _framework(child):
                    run.append(child)
                    continue
                if run:
                    new.append(_tab_set(run))
                    run = []
                if child is not None:
                    new.append(child)
            for child in children:
                parent.remove(child)
            parent.extend(new)


SOLUTION_TITLE = re.compile(r"Solution to exercise \d+")


class SolutionTitles(SphinxTransform):
    """Mark each sphinx-design dropdown titled "Solution to exercise N" (before its HTML post-transform: a
    container whose first child is the title's rubric) as a solution, before the page's messages are translated
    (priority 20), which changes the title."""

    default_priority = 15

    def apply(self, **kwargs):
        for node in self.document.findall(nodes.container):
            if (
                is_component(node, "dropdown")
                and node.get("has_title")
                and len(node.children) > 0
                and isinstance(node[0], nodes.rubric)
                and SOLUTION_TITLE.fullmatch(node[0].astext().strip()) is not None
            ):
                node["d2l_solution"] = True


def _is_solution(node):
    """Whether ``node`` is a solution's dropdown (:class:`SolutionTitles`)."""
    return isinstance(node, nodes.container) and node.get("d2l_solution", False)


def _is_code_cell(node):
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def _is_solution_code(node):
    """A code cell, or a tab-set of framework cells (:class:`FrameworkTabs`)."""
    return _is_code_cell(node) or (
        is_component(node, "tab-set") and any(True for _ in node.findall(_is_code_cell))
    )


class SolutionCode(SphinxTransform):
    """Move the code cells and framework tab-sets that directly follow a "Solution to exercise N" dropdown
    into it, without their hide-cell toggles (item 7 of the module's docstring). After :class:`FrameworkTabs`,
    which makes the tab-sets; before the post-transforms of sphinx-design (the dropdown's ``<details>``) and of
    myst-nb (the toggles of cells with a ``hide_mode``)."""

    default_priority = 505

    def apply(self, **kwargs):
        for solution in list(self.document.findall(_is_solution)):
            parent = solution.parent
            following = parent.children[parent.index(solution) + 1 :]
            moved = []
            for node in following:
                if not _is_solution_code(node):
                    break
                moved.append(node)
            for node in moved:
                parent.remove(node)
                solution += node
                for cell in node.findall(_is_code_cell):
                    cell.attributes.pop("hide_mode", None)


COLAB = "https://colab.research.google.com/github/{repository}/blob/{branch}/{folder}{framework}/{docname}.ipynb"
REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+")


def colab_url(repository, branch, framework, docname, folder=""):
    """Where Colab opens ``framework``'s notebook of the page ``docname``, as published on ``branch``: under
    ``<folder>/`` for a language other than English (booktools.i18n.FOLDERS)."""
    folder = f"{folder}/" if folder else ""
    return COLAB.format(
        repository=repository, branch=branch, folder=folder, framework=framework, docname=docname
    )


def colab_links(repository, branch, docname, folder=""):
    """The HTML of a page's "Open in Colab" links, one per framework; empty when no repository is set."""
    if not repository:
        return ""
    if not REPOSITORY.fullmatch(repository) or not branch:
        raise ValueError(
            "d2l_repository in _config.yml must name a GitHub repository as 'owner/name' and "
            f"d2l_notebooks_branch a branch; got {repository!r} and {branch!r}"
        )
    links = "".join(
        f'<a class="d2l-colab" href="{colab_url(repository, branch, fw, docname, folder)}" '
        f'data-framework="{fw}" target="_blank" rel="noopener">'
        + _("Open in Colab ({framework})").format(framework=LABELS[fw])
        + "</a>"
        for fw in FRAMEWORKS
    )
    return f'<p class="d2l-colab-links">{links}</p>'


def _notebook(app, framework, docname):
    return Path(app.srcdir, app.config.d2l_notebooks_dir, framework, docname + ".ipynb").resolve()


class NotebookDownloads(SphinxTransform):
    """Add links to the page's per-framework notebooks below its title."""

    default_priority = 510

    def apply(self, **kwargs):
        docname = self.env.docname
        if not all(_notebook(self.app, fw, docname).is_file() for fw in FRAMEWORKS):
            return
        section = next(iter(self.document.findall(nodes.section)), None)
        if section is None:
            return
        up = "../" * docname.count("/")
        links = " · ".join(
            f'<a class="d2l-download d2l-download-{fw}" href="{up}notebooks/{fw}/{docname}.ipynb" '
            f'download="{Path(docname).name}-{fw}.ipynb" data-framework="{fw}">{LABELS[fw]}</a>'
            for fw in FRAMEWORKS
        )
        running = _("running the notebooks")
        guide = f'<a href="{up}chapters/running-locally.html">{running}</a>'
        text = _("Run this section yourself: download its notebook for {links} (see {guide}).")
        html = f'<p class="d2l-downloads">{text.format(links=links, guide=guide)}</p>'
        title_index = next(
            (i for i, c in enumerate(section.children) if isinstance(c, nodes.title)), -1
        )
        html += colab_links(
            self.config.d2l_repository,
            self.config.d2l_notebooks_branch,
            docname,
            self.config.d2l_language_folder,
        )
        section.insert(title_index + 1, nodes.raw("", html, format="html"))


def site_url(config):
    """The address the site is published at, ending in "/", or "" where none is known (see the module's
    docstring)."""
    url = config.d2l_site_url or os.environ.get("D2L_SITE_URL", "")
    if not url and config.d2l_repository:
        owner, name = config.d2l_repository.split("/")
        owner = owner.lower()
        url = f"https://{owner}.github.io/" + (
            "" if name.lower() == f"{owner}.github.io" else f"{name}/"
        )
    return url if not url or url.endswith("/") else url + "/"


def wheel_url(config):
    """The URL the notebooks' setup cells install d2lcore from, or None where they name PyPI."""
    if config.d2l_install_from not in ("site", "pypi"):
        raise ValueError(
            f"d2l_install_from in _config.yml must be 'site' or 'pypi'; got {config.d2l_install_from!r}"
        )
    url = site_url(config)
    return f"{url}notebooks/{WHEEL}" if config.d2l_install_from == "site" and url else None


def _published(src, framework, url):
    """The bytes of the notebook ``src`` as the site offers it: its setup cell names ``url`` (if any)."""
    if url is None:
        return src.read_bytes()
    nb = nbformat.read(src, as_version=4)
    setup = nb.cells[0]
    if SETUP_TAG not in setup.metadata.get("tags", []):
        raise ValueError(f"{src} does not start with the setup cell")
    setup.source = setup_source(framework, url)
    return (nbformat.writes(nb) + "\n").encode("utf-8")


def copy_notebooks(app, exception):
    """Copy the per-framework notebooks of the built pages next to the HTML, and put each framework's
    notebooks into one zip file, notebooks/<framework>.zip; with ``d2l_install_from: site``, the wheel too."""
    if exception is not None or app.builder.format != "html":
        return
    url = wheel_url(app.config)
    if url is not None:
        wheel = Path(app.srcdir, app.config.d2l_dist_dir, WHEEL).resolve()
        if not wheel.is_file():
            raise FileNotFoundError(
                f"the notebooks install d2lcore from the site ({url}), but {wheel} is missing: run `make dist`"
            )
        dest = Path(app.outdir, "notebooks", WHEEL)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wheel, dest)
    for fw in FRAMEWORKS:
        copied = []
        for docname in sorted(app.env.found_docs):
            src = _notebook(app, fw, docname)
            if src.is_file():
                dest = Path(app.outdir, "notebooks", fw, docname + ".ipynb")
                dest.parent.mkdir(parents=True, exist_ok=True)
                data = _published(src, fw, url)
                dest.write_bytes(data)
                copied.append((docname, data))
        if copied:
            _write_zip(Path(app.outdir, "notebooks", f"{fw}.zip"), fw, copied)


def _write_zip(path, framework, notebooks):
    """A zip of (docname, bytes) pairs under <framework>/, with fixed timestamps so equal content gives
    an equal file; written to a temporary name first, then renamed."""
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for docname, data in notebooks:
            info = zipfile.ZipInfo(f"{framework}/{docname}.ipynb", date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    tmp.replace(path)


def _cell_of(node):
    while node is not None and not (
        isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"
    ):
        node = node.parent
    return node


class FigureCopies(SphinxTransform):
    """Leave the other frameworks' copies of a figure (those whose cell names the first copy in
    ``d2l.figure_of``) out of the numbering: Sphinx numbers every captioned figure that has an id, and gives one
    to each (priority 210)."""

    default_priority = 520

    def apply(self, **kwargs):
        for figure in self.document.findall(nodes.figure):
            cell = _cell_of(figure)
            name = cell and cell.get("cell_metadata", {}).get("d2l", {}).get("figure_of")
            if name:
                figure["ids"] = []
                figure["d2l_figure_of"] = name


def number_figure_copies(app, doctree, docname):
    """Give each copy that :class:`FigureCopies` set aside the number of the first copy, and an id of its own,
    ``<name>-<framework>``, which the HTML writer needs to show the number."""
    numbers = app.env.toc_fignumbers.get(docname, {}).get("figure", {})
    for figure in doctree.findall(nodes.figure):
        name = figure.get("d2l_figure_of")
        if name is None or figure["ids"]:
            continue
        copy_id = nodes.make_id(f"{name}-{_framework(_cell_of(figure))}")
        figure["ids"].append(copy_id)
        if nodes.make_id(name) in numbers:
            numbers[copy_id] = numbers[nodes.make_id(name)]


# myst-nb's prompts of a hidden cell, "Show code cell {type}" for each type it fills in, as words of the book
_PROMPTS = {
    "Show code cell content": _("Show code cell content"),
    "Hide code cell content": _("Hide code cell content"),
    "Show code cell source": _("Show code cell source"),
    "Hide code cell source": _("Hide code cell source"),
    "Show code cell output": _("Show code cell output"),
    "Hide code cell output": _("Hide code cell output"),
    "Show code cell outputs": _("Show code cell outputs"),
    "Hide code cell outputs": _("Hide code cell outputs"),
}


class HiddenCellPrompts(SphinxPostTransform):
    """The prompts of myst-nb's hidden cells in the page's language (a prompt that a cell sets itself stays)."""

    # After myst-nb's HideInputCells (199), which fills in the prompts' {type}
    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs):
        for node in self.document.findall(HideCodeCellNode):
            for key in ("prompt_show", "prompt_hide"):
                node[key] = str(_PROMPTS.get(node[key], node[key]))


def _language_code(config):
    """This build's BCP 47 code (``en`` for English): the ``lang`` of its pages and its ``hreflang``."""
    found = config.d2l_languages.get(config.language) if config.language else None
    return found[2] if found else "en"


def language_links(app, pagename, templatename, context, doctree):
    """The page in every language of the site, as ``<link rel="alternate" hreflang>`` elements in its head
    (their ``title`` is the language's own name), from which the page's script builds the language menu, with
    the menu's label in a ``<meta name="d2l-language-label">``. English is at the site's root, each other
    language in its folder (``d2l_languages``: {Sphinx code: [folder, name, BCP 47 code]};
    ``d2l_language_folder``: this build's folder, empty for English). The page's ``lang`` attribute is the same
    BCP 47 code as its ``hreflang`` (``zh-Hans``, where Sphinx would write ``zh_CN``)."""
    languages = app.config.d2l_languages
    if not languages:
        return
    context["language"] = _language_code(app.config)
    up = "../" * pagename.count("/") + ("../" if app.config.d2l_language_folder else "")
    tags = []
    for folder, name, code in [("", "English", "en"), *languages.values()]:
        href = f"{up}{folder + '/' if folder else ''}{pagename}.html"
        tags.append(f'<link rel="alternate" hreflang="{code}" href="{href}" title="{name}">')
    label = escape(_("Language"), quote=True)
    tags.append(f'<meta name="d2l-language-label" content="{label}">')
    context["metatags"] = context.get("metatags", "") + "\n".join(tags) + "\n"


def theme_words(app, pagename, templatename, context, doctree):
    """The search field's placeholder in the page's language: sphinx-book-theme makes it of its own catalogue's
    "Search", which no language has, so that it stays "Search..." (after the theme's handler: priority 900)."""
    if "search_bar_text" not in (app.config.html_theme_options or {}):
        context["theme_search_bar_text"] = sphinx_gettext("Search") + "..."


def _add_static(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.setup_extension("sphinx_design")
    app.connect("builder-inited", _add_static)
    app.add_css_file("d2l.css")
    app.add_js_file("d2l.js")
    app.add_config_value("d2l_notebooks_dir", "../notebooks", "env")
    app.add_config_value("d2l_repository", "", "env")
    app.add_config_value("d2l_notebooks_branch", "notebooks", "env")
    app.add_config_value("d2l_install_from", "site", "env")
    app.add_config_value("d2l_site_url", "", "env")
    app.add_config_value("d2l_dist_dir", "../dist", "env")
    # the languages of the site and this build's (booktools.i18n sets them)
    app.add_config_value("d2l_languages", {}, "html")
    app.add_config_value("d2l_language_folder", "", "env")
    app.add_message_catalog("booktools", str(LOCALES))
    app.connect("html-page-context", language_links)
    app.connect("html-page-context", theme_words, priority=900)
    app.add_transform(SolutionTitles)
    app.add_transform(FrameworkTabs)
    app.add_transform(SolutionCode)
    app.add_transform(NotebookDownloads)
    app.add_transform(FigureCopies)
    app.add_post_transform(HiddenCellPrompts)
    app.connect("build-finished", copy_notebooks)
    app.connect("doctree-resolved", number_figure_copies)
    comparison.setup(app)  # the record-table directive
    record_role.setup(app)  # the record role of prose
    api.setup(app)  # the d2l-api directive
    return {"parallel_read_safe": True, "parallel_write_safe": True}
