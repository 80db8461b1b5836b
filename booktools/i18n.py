"""The book's languages: message catalogues, their state, and one build of the site per language.

The English MyST pages are the only source. Sphinx's gettext builder extracts their messages (each paragraph,
heading, list item, caption and alt text, as its MyST source, record roles included) from the staged site into
``_build/gettext/<page>.pot``; ``sphinx-intl update`` merges them into one catalogue per page and language,
``locales/<language>/LC_MESSAGES/<page>.po``, where a changed English message marks its translation fuzzy and a
new one comes in untranslated. Code cells, their outputs and d2lcore's docstrings (the API reference) are not
messages: every edition shows them as the English one does.

Each language's site is Sphinx's build of the same staged site with ``language`` set and the catalogues in
``locale_dirs``: nothing is executed again. It lands in ``_build/html/<folder>/`` (:data:`FOLDERS`), next to the
English site. A language is *published* (built by ``make html`` and checked by ``make test``) once it is listed in
:data:`PUBLISHED`; a published language may have no fuzzy or untranslated message (:func:`check_complete`).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from io import BytesIO
from pathlib import Path

import nbformat
import sphinx
import yaml
from babel.messages.catalog import Catalog
from babel.messages.extract import extract
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from booktools.labels import labels
from booktools.links import rewrite_links
from booktools.paths import (
    BUILD,
    HTML,
    LOCALES,
    ROOT,
    SITE,
    notebook_path,
    rel,
    sources,
    write_if_changed,
)
from booktools.quotes import decimal_symbol, fill_notebook
from booktools.split import for_jupyter, read_source
from booktools.translate import translate
from d2lcore import FRAMEWORKS

LANGUAGES = {"ru": "Русский", "tr": "Türkçe", "zh_CN": "简体中文"}
"""Sphinx's code of each translation, with the language's own name for it (the language menu)."""
PUBLISHED = ("ru", "tr", "zh_CN")
"""The languages the site offers, in the menu's order after English."""
FOLDERS = {"ru": "ru", "tr": "tr", "zh_CN": "zh-cn"}
"""Where each language's site lives under the English one (``/ru/``)."""
HREFLANG = {"en": "en", "ru": "ru", "tr": "tr", "zh_CN": "zh-Hans"}
"""Each language's code for ``hreflang`` and ``lang`` attributes (BCP 47)."""

GETTEXT = BUILD / "gettext"
LANGUAGE_BUILDS = (
    BUILD / "languages"
)  # _build/languages/<language>/: Sphinx's tree, doctrees, config


def _jupyter_book():
    return str(Path(sys.executable).with_name("jupyter-book"))


def _config(**extra):
    """The staged site's _config.yml with ``extra`` added to its Sphinx configuration."""
    config = yaml.safe_load((SITE / "_config.yml").read_text(encoding="utf-8"))
    config["sphinx"]["config"].update(extra)
    return config


def _build(builder_args, out, config, strict):
    """Run Jupyter Book on the staged site with ``config``, its tree under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    config_file = out / "_config.yml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    cmd = [
        _jupyter_book(),
        "build",
        str(SITE),
        "--path-output",
        str(out),
        "--config",
        str(config_file),
    ]
    cmd += builder_args + (["-W", "-n", "--keep-going"] if strict else [])
    print("$", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"the build in {rel(out)} failed (exit {result.returncode}); see above")


OWN_WORDS = ("sphinx_ext.py", "comparison.py", "i18n.py")
"""The modules of booktools whose ``_("...")`` calls are words of the pages: booktools.pot."""


def gettext():
    """Extract the messages of the staged site (``make html`` stages it) into _build/gettext/<page>.pot, and
    booktools' own words into _build/gettext/booktools.pot."""
    out = BUILD / "gettext-build"
    if out.exists():  # read every page again: a change to booktools alone can change the messages
        shutil.rmtree(out)
    config = _config(gettext_compact=False, gettext_location=False, gettext_uuid=False)
    _build(["--builder", "custom", "--custom-builder", "gettext"], out, config, strict=True)
    if GETTEXT.exists():
        shutil.rmtree(GETTEXT)
    shutil.copytree(out / "_build" / "gettext", GETTEXT)
    own = Catalog(project="booktools")
    for name in OWN_WORDS:
        with open(Path(__file__).with_name(name), "rb") as f:
            for _line, text, _comments, _context in extract("python", f, keywords={"_": None}):
                own.add(text)
    with open(GETTEXT / "booktools.pot", "wb") as f:
        write_po(f, own, width=0, omit_header=False)
    print(f"The templates are in {rel(GETTEXT)}", flush=True)


def update(languages=tuple(LANGUAGES)):
    """Merge _build/gettext's templates into the catalogues of ``languages`` (sphinx-intl update)."""
    sphinx_intl = str(Path(sys.executable).with_name("sphinx-intl"))
    cmd = [sphinx_intl, "update", "-p", str(GETTEXT), "-d", str(LOCALES), "-w", "0"]
    for language in languages:
        cmd += ["-l", language]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)


def carry_over(languages=tuple(LANGUAGES)):
    """Give an untranslated message the translation that the same English message has in another catalogue of
    its language (obsolete entries included): a paragraph moved from one page to another, as when a page is
    split, keeps its translation. Fuzzy messages are left to the translator. Return {language: messages filled}."""
    filled = {}
    for language in languages:
        paths = catalogues(language).values()
        read = {}
        for path in paths:
            with open(path, "rb") as f:
                read[path] = read_po(f)
        known = {}
        for catalog in read.values():
            for message in [*catalog, *catalog.obsolete.values()]:
                if message.id and message.string and not message.fuzzy:
                    known.setdefault(message.id, message.string)
        filled[language] = 0
        for path, catalog in read.items():
            empty = [m for m in catalog if m.id and not m.string and not m.fuzzy and m.id in known]
            for message in empty:
                message.string = known[message.id]
            if empty:
                with open(path, "wb") as f:
                    write_po(f, catalog, width=0)
                filled[language] += len(empty)
        print(
            f"{language}: {filled[language]} messages carried over from other catalogues",
            flush=True,
        )
    return filled


@dataclass
class Counts:
    translated: int = 0
    fuzzy: int = 0
    untranslated: int = 0

    def __iadd__(self, other):
        self.translated += other.translated
        self.fuzzy += other.fuzzy
        self.untranslated += other.untranslated
        return self


def catalogues(language):
    """The page catalogues of ``language``: {page docname: path of its .po}."""
    folder = LOCALES / language / "LC_MESSAGES"
    return {
        path.relative_to(folder).with_suffix("").as_posix(): path
        for path in sorted(folder.rglob("*.po"))
    }


def counts(path):
    """The translated, fuzzy and untranslated messages of one catalogue (obsolete ones are not counted)."""
    with open(path, "rb") as f:
        catalog = read_po(f)
    result = Counts()
    for message in catalog:
        if not message.id:
            continue
        if message.fuzzy:
            result.fuzzy += 1
        elif message.string:
            result.translated += 1
        else:
            result.untranslated += 1
    return result


def statistics(languages=tuple(LANGUAGES)):
    """Print, per language and page, the translated, fuzzy and untranslated messages; return the totals."""
    totals = {}
    for language in languages:
        total = Counts()
        print(f"{language} ({LANGUAGES[language]}):")
        for page, path in catalogues(language).items():
            c = counts(path)
            total += c
            print(
                f"  {page:55} {c.translated:5} translated {c.fuzzy:4} fuzzy {c.untranslated:4} untranslated"
            )
        print(
            f"  {'all pages':55} {total.translated:5} translated {total.fuzzy:4} fuzzy "
            f"{total.untranslated:4} untranslated"
        )
        totals[language] = total
    return totals


def _messages(path):
    with open(path, "rb") as f:
        return {m.id for m in read_po(f) if m.id}


def check_complete(languages=PUBLISHED):
    """SystemExit naming, for each published language, the pages whose catalogue lacks a message of the
    page's template in _build/gettext (``make gettext`` has not been run since the English changed), or has
    fuzzy or untranslated messages."""
    problems = []
    for template in sorted(GETTEXT.rglob("*.pot")):
        name = template.relative_to(GETTEXT).with_suffix("").as_posix()
        wanted = _messages(template)
        for language in languages:
            path = LOCALES / language / "LC_MESSAGES" / f"{name}.po"
            lacking = wanted - (_messages(path) if path.is_file() else set())
            if lacking:
                problems.append(
                    f"{language}: {rel(path)} lacks {len(lacking)} messages of the English page, e.g. "
                    f"{sorted(lacking)[0][:60]!r}: run `make gettext`, then translate them"
                )
    for language in languages:
        for path in catalogues(language).values():
            c = counts(path)
            if c.fuzzy or c.untranslated:
                problems.append(
                    f"{language}: {rel(path)} has {c.fuzzy} fuzzy and {c.untranslated} untranslated messages"
                )
    if problems:
        raise SystemExit("Translations are incomplete:\n  " + "\n  ".join(problems))


ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
"""A MyST role: ``{ref}`sec-transformer```, ``{record}`bleu.bleu:.2f```, ``{numref}`...```."""
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
CODE = re.compile(r"`[^`\n]+`")
THOUSANDS = re.compile(r"(?<=\d)(?:\{,\}|\{\.\}|\\,|\\ |~)(?=\d{3})")
LINK = re.compile(r"\]\(([^)\s]+)\)")
HTML_TAG = re.compile(r"</?[a-z][^>]*>")
FIGURE = re.compile(r"(?<![A-Za-z0-9_.])\d*\.\d{2,}(?![A-Za-z0-9_]|\.\d)")
"""A decimal figure as booktools.quotes finds them, next to letters of any script (Chinese has no spaces)."""


REFERENCE_TEXT = re.compile(r"\{(ref|numref)\}`[^`<]*<([^`>]+)>`")
"""A reference with text of its own, ``{numref}`section %s <label>```: the text is translated, the label not."""


def _parts(text, decimal):
    """What a message and its translation must share: its roles (a reference's label, not its text), math,
    inline code, link targets, HTML tags and figures (with ``decimal`` read as a decimal point)."""
    roles = [REFERENCE_TEXT.sub(r"{\1}`<\2>`", role) for role in ROLE.findall(text)]
    rest = ROLE.sub(" ", text)
    # a number in math may group its thousands as the language does: 16{,}384, 16\,384, 16\ 384
    math = [THOUSANDS.sub("", m) for m in MATH.findall(rest)]
    rest = MATH.sub(" ", rest)
    code = CODE.findall(rest)
    rest = CODE.sub(" ", rest)
    links = LINK.findall(rest)
    tags = HTML_TAG.findall(rest)
    rest = HTML_TAG.sub(" ", rest)
    if decimal != ".":
        rest = re.sub(rf"(?<=\d){re.escape(decimal)}(?=\d)", ".", rest)
    figures = FIGURE.findall(rest)
    return {
        "roles": sorted(roles),
        "math": sorted(math),
        "inline code": sorted(code),
        "link targets": sorted(links),
        "HTML tags": sorted(tags),
        "figures": sorted(figures),
    }


def differences(msgid, msgstr, language):
    """How a translation differs from its message in what both must share (see :func:`_parts`): a list of
    "roles: ... only in the message" lines, empty where they agree."""
    decimal = decimal_symbol(language)
    source, target = _parts(msgid, "."), _parts(msgstr, decimal)
    problems = []
    for kind in source:
        missing = sorted((Counter(source[kind]) - Counter(target[kind])).elements())
        extra = sorted((Counter(target[kind]) - Counter(source[kind])).elements())
        if missing:
            problems.append(f"{kind} {missing} only in the English message")
        if extra:
            problems.append(f"{kind} {extra} only in the translation")
    return problems


def check_catalogue(path, language):
    """The differences of each translated message of the catalogue at ``path``: [(msgid, problems)]."""
    with open(path, "rb") as f:
        catalog = read_po(f)
    found = []
    for message in catalog:
        if message.id and message.string and not message.fuzzy:
            problems = differences(message.id, message.string, language)
            if problems:
                found.append((message.id, problems))
    return found


def check_consistent(languages=tuple(LANGUAGES)):
    """SystemExit listing every translated message that does not share its message's roles, math, inline code,
    link targets, HTML tags and figures (:func:`differences`)."""
    problems = []
    for language in languages:
        for path in catalogues(language).values():
            for msgid, found in check_catalogue(path, language):
                problems.append(f"{rel(path)}: {msgid[:70]!r}: " + "; ".join(found))
    if problems:
        raise SystemExit("Translations differ from their messages:\n  " + "\n  ".join(problems))


def catalogue(language, name):
    """The translations of the catalogue ``name`` (a page's docname, or "booktools") in ``language``:
    {message: translation}, fuzzy and untranslated messages left out."""
    path = LOCALES / language / "LC_MESSAGES" / f"{name}.po"
    if not path.is_file():
        return {}
    with open(path, "rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}


def gettext_function(language):
    """booktools' own words (:mod:`booktools.sphinx_ext`) in ``language``, outside Sphinx."""
    words = catalogue(language, "booktools")
    return lambda text: words.get(text, text)


def translated_labels(language):
    """:func:`booktools.labels.labels` with each heading's title, and so its Jupyter anchor, in ``language``."""
    found = {}
    for name, label in labels().items():
        title = catalogue(language, rel(label.source).with_suffix("").as_posix()).get(
            label.title, label.title
        )
        anchor = title.replace(" ", "-") if label.anchor else None
        found[name] = replace(label, title=title, anchor=anchor)
    return found


class Untranslated(RuntimeError):
    """A notebook of a published language would show English paragraphs."""


def notebook(language, source, framework, known=None, complete=True):
    """``framework``'s executed notebook of ``source`` with its markdown in ``language``: the code cells and
    outputs of the English one (_build/notebooks), each markdown cell translated from the page's source with the
    page's catalogue (:mod:`booktools.translate`), then made plain Markdown as the split makes it and its record
    roles filled in with the language's decimal symbol. Untranslated if a block has no translation (unless not
    ``complete``: then it stays English)."""
    nb = nbformat.read(notebook_path(source, framework), as_version=4)
    cells = {cell.id: cell for cell in read_source(source).cells}
    page = rel(source).with_suffix("").as_posix()
    words = catalogue(language, page)
    folder = Path(source).parent
    known = translated_labels(language) if known is None else known
    _ = gettext_function(language)
    numbered = _("Section %s")
    missing = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        text, lacking = translate(rewrite_links(cells[cell.id].source, folder), words)
        missing += lacking
        cell.source = text
        cell.pop("attachments", None)
        for_jupyter(cell, folder, known, numbered)
    if missing and complete:
        raise Untranslated(
            f"{rel(source)} [{framework}]: {len(missing)} blocks have no {language} translation, the first: "
            f"{missing[0][:80]!r}"
        )
    nb.metadata["d2l"]["language"] = language
    return fill_notebook(nb, f"{rel(source)} ({language})", language)


def notebooks_dir(language):
    return LANGUAGE_BUILDS / language / "notebooks"


def write_notebooks(language, complete=True):
    """Every per-framework notebook in ``language``, under _build/languages/<language>/notebooks/."""
    known = translated_labels(language)
    for source in sources():
        for framework in FRAMEWORKS:
            path = notebooks_dir(language) / framework / rel(source).with_suffix(".ipynb")
            nb = notebook(language, source, framework, known, complete)
            write_if_changed(path, nbformat.writes(nb) + "\n")


THEME_WORDS = "sphinx"
"""The catalogue of the theme's words, ``locales/<language>/LC_MESSAGES/sphinx.po``: the words of
pydata-sphinx-theme (whose catalogue domain is Sphinx's own) and of Sphinx that the themes' and Sphinx's catalogues
of the language lack. Sphinx reads it before its own and the themes', falling back to those."""


def translations_js(language, words):
    """The text of ``sphinx.js`` for ``language``: the translations of Sphinx's own script (its search page's
    words, such as the result line) in ``language``, with ``words`` added. Sphinx takes the first sphinx.js it finds
    in ``locale_dirs``, before its own, so this one must hold all of its own."""
    own = Path(sphinx.__file__).parent / "locale" / language / "LC_MESSAGES" / "sphinx.js"
    if own.is_file():
        text = own.read_text(encoding="utf-8")
        data = json.loads(text[text.index("{") : text.rindex("}") + 1])
    else:
        data = {"locale": language, "messages": {}, "plural_expr": "(n != 1)"}
    data["messages"].update(words)
    return f"Documentation.addTranslations({json.dumps(data, indent=4, sort_keys=True)});\n"


def compile_catalogues(language):
    """Compile the catalogues of ``language`` to .mo files next to them (Sphinx reads those; booktools' own and
    the theme's catalogues must exist before Sphinx starts), and the theme's words (:data:`THEME_WORDS`) for Sphinx's
    search page script too, into sphinx.js (:func:`translations_js`)."""
    folder = LOCALES / language / "LC_MESSAGES"
    for path in folder.rglob("*.po"):
        with open(path, "rb") as f:
            catalog = read_po(f, locale=language)
        data = BytesIO()
        write_mo(data, catalog)
        write_if_changed(path.with_suffix(".mo"), data.getvalue())
    theme = catalogue(language, THEME_WORDS)
    if theme:
        write_if_changed(folder / f"{THEME_WORDS}.js", translations_js(language, theme))


def site_languages(codes=None):
    """The languages of the site's language menu (``codes``, default the published ones, in that order):
    {code: [folder, name, BCP 47 code]}."""
    codes = PUBLISHED if codes is None else codes
    return {
        code: [FOLDERS[code], LANGUAGES[code], HREFLANG[code]]
        for code in PUBLISHED
        if code in codes
    }


LICENCE = '<p class="d2l-licence">{}</p>'


def build(language, strict=True):
    """The site in ``language``, from the staged site and the executed notebooks (nothing is executed), into
    _build/html/<folder>/."""
    start = time.perf_counter()
    write_notebooks(language, complete=strict)
    compile_catalogues(language)
    out = LANGUAGE_BUILDS / language
    _ = gettext_function(language)
    text = _("Text and code under the MIT License (the LICENSE file of the book's repository).")
    theme = _config()["sphinx"]["config"]["html_theme_options"]
    config = _config(
        html_theme_options={**theme, "extra_footer": LICENCE.format(text)},
        # "Section 4" of a {numref}, as the notebooks write it (Sphinx's own word order may differ: "节 4")
        numfig_format={"section": _("Section %s")},
        language=language,
        locale_dirs=[str(LOCALES)],
        gettext_compact=False,
        d2l_notebooks_dir=os.path.relpath(notebooks_dir(language), SITE),
        d2l_language_folder=FOLDERS[language],
    )
    _build([], out, config, strict)
    target = HTML / FOLDERS[language]
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(out / "_build" / "html", target)
    seconds = time.perf_counter() - start
    print(
        f"The {LANGUAGES[language]} book is in {rel(target)}/index.html ({seconds:.0f} s)",
        flush=True,
    )
