"""Section numbers and references by label.

_toc.yml numbers the sections of the attention chapter (1, 2, ...), and the built book shows the numbers in the
sidebar and the headings. Prose never types such a number: a page's title, or one of its ``##`` headings, carries a
MyST label on the line above it, ``(sec-bahdanau-attention)=``, and prose refers to it with ``{ref}`label``` (the
heading's title), ``{ref}`text <label>``` (other text) or ``{numref}`label``` ("Section 5"; ``{numref}`Sec. %s
<label>``` puts the number into other text). Sphinx resolves these in the built book.

Jupyter knows neither the labels nor the roles, so the per-framework notebooks get plain Markdown
(:func:`plain_references`): the label lines are dropped, and each reference becomes a link to the page (to the
heading's anchor for a ``##`` heading) whose text is the title or the number, as the book shows it.
"""

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from booktools.paths import CHAPTERS, ROOT

TARGET = re.compile(r"^\(([A-Za-z0-9_.:-]+)\)=[ \t]*\n", re.M)
"""A MyST label on its own line, above the heading it names."""
REFERENCE = re.compile(r"\{(ref|numref)\}`(?:([^`<]*?)\s*<([^`>]+)>|([^`<>]+))`")
"""``{ref}`label```, ``{ref}`text <label>```, and the same with ``numref``."""
HEADING = re.compile(r"^(#{1,2}) (.+)$", re.M)


class LabelError(ValueError):
    """A reference names a label that no heading carries, or two headings carry the same label."""


@dataclass(frozen=True)
class Label:
    source: Path  # the page, a chapter source
    title: str  # the heading's text
    number: (
        str | None
    )  # "5" for a numbered section, "5.2" for its second ## heading, None where unnumbered
    anchor: (
        str | None
    )  # the heading's anchor in Jupyter (None for the page's title: the link names the page)


def numbered_files():
    """The files (without suffix) whose headings _toc.yml numbers, in order: the entries of every subtree with
    ``options: numbered: true``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("options", {}).get("numbered"):
                found.extend(entry["file"] for entry in node.get("sections", []) if "file" in entry)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(toc)
    return found


def _labels_of(path, number):
    """The labels of one page: {label: Label}."""
    text = path.read_text(encoding="utf-8")
    found, sections = {}, 0
    for match in HEADING.finditer(text):
        level, title = len(match.group(1)), match.group(2).strip()
        if level == 2:
            sections += 1
        before = text[: match.start()]
        target = TARGET.search(before.splitlines(keepends=True)[-1] if before else "")
        if not target:
            continue
        if level == 1:
            found[target.group(1)] = Label(path, title, number, None)
        else:
            sub = f"{number}.{sections}" if number else None
            found[target.group(1)] = Label(path, title, sub, title.replace(" ", "-"))
    return found


@functools.cache
def labels(chapters=CHAPTERS):
    """Every label on a heading of the book's pages: {label: Label}."""
    numbers = {name: str(i) for i, name in enumerate(numbered_files(), start=1)}
    found = {}
    for path in sorted(Path(chapters).rglob("*.md")):
        name = (
            path.relative_to(ROOT).with_suffix("").as_posix() if path.is_relative_to(ROOT) else None
        )
        for label, where in _labels_of(path, numbers.get(name)).items():
            if label in found:
                raise LabelError(f"{label} labels a heading of {found[label].source} and of {path}")
            found[label] = where
    return found


def plain_references(text, folder, known=None, numbered="Section %s"):
    """``text`` (Markdown of a page in ``folder``) with its label lines dropped and its ``{ref}``/``{numref}``
    roles turned into Markdown links to the pages they name (``.md``: booktools.links then makes them
    ``.ipynb``). ``known``: the labels (default: :func:`labels`); ``numbered``: the text of a ``{numref}``
    without one of its own, in the page's language."""
    known = labels() if known is None else known

    def link(match):
        role, text, label = match.group(1), match.group(2), match.group(3) or match.group(4)
        label = label.strip()
        if label not in known:
            raise LabelError(
                f"{{{role}}}`{label}` names no label; labels: {', '.join(sorted(known))}"
            )
        target = known[label]
        if role == "numref":
            if target.number is None:
                raise LabelError(f"{{numref}}`{label}` names a heading without a number")
            shown = (text or numbered).replace("%s", target.number)
        else:
            shown = text or target.title
        path = Path(target.source).resolve()
        href = Path(os.path.relpath(path, Path(folder).resolve())).as_posix()
        if target.anchor:
            href += f"#{target.anchor}"
        return f"[{shown}]({href})"

    return REFERENCE.sub(link, TARGET.sub("", text))
