"""Numbered, captioned figures, in a source that stays plain Markdown for Jupyter.

A drawing is an image on a line of its own, with its description as alt text and its caption as the title:

    ![A query feeds an attention pooling block ...](img/qkv.svg "Attention pooling: ...")

Jupyter shows the image (the title is its tooltip); the merge turns it into a MyST ``{figure}`` directive with the
alt text, the caption and the name ``fig-<file stem>`` (``fig-qkv``), which Sphinx numbers ("Fig. 3").

A figure that a code cell draws takes its caption, name and alt text from the cell's metadata, as myst-nb reads
them::

    ```{code-cell} ipython3
    ---
    mystnb:
      figure: {name: fig-identity-weights, caption: "..."}
      image: {alt: "..."}
    ---
    ```

myst-nb wraps every displayed output of such a cell into the figure, so the merge turns a cell's other displayed
outputs (a record's line) into printed text. A cell whose output differs by framework appears once per framework
tab (:mod:`booktools.merge`); only the first copy keeps the name (a label must be unique), the others carry it as
``d2l.figure_of`` and the Sphinx extension gives them the first copy's number (:mod:`booktools.sphinx_ext`).
"""

import copy
import re
from pathlib import PurePosixPath

import nbformat

IMAGE = re.compile(r'!\[([^\]]*)\]\(([^)\s]+)(?:\s+"([^"]*)")?\)')
"""A Markdown image: alt text, target, and the optional title (the caption)."""

_FIGURE_LINE = re.compile(r'^!\[([^\]]*)\]\(([^)\s]+)(?:\s+"([^"]*)")?\)[ \t]*$', re.M)


class FigureError(ValueError):
    """A figure without its caption, description or name, or a name given to two figures."""


def figure_name(target):
    """The label of the figure showing the image file ``target``: ``fig-<stem>``."""
    return "fig-" + PurePosixPath(target).stem


def figure_directives(text, where):
    """``text`` with every local image on a line of its own turned into a numbered ``{figure}`` directive; a
    FigureError names an image without caption or alt text."""

    def directive(match):
        alt, target, caption = match.groups()
        if "://" in target:
            return match.group(0)
        if not caption or not caption.strip() or not alt.strip():
            raise FigureError(
                f'{where}: the image {target} needs alt text and a caption: ![description]({target} "caption")'
            )
        return "\n".join(
            [
                f"```{{figure}} {target}",
                f":alt: {' '.join(alt.split())}",
                f":name: {figure_name(target)}",
                "",
                caption.strip(),
                "```",
            ]
        )

    return _FIGURE_LINE.sub(directive, text)


def figure_options(cell):
    """The myst-nb figure options of a code cell (a dict; empty if the cell draws no captioned figure)."""
    return cell.get("metadata", {}).get("mystnb", {}).get("figure", {}) or {}


def check_figure_cell(cell, where):
    """A FigureError if a captioned figure cell lacks its name, caption or alt text."""
    options = figure_options(cell)
    if not options:
        return
    alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
    missing = [
        k
        for k, v in (
            ("name", options.get("name")),
            ("caption", options.get("caption")),
            ("alt", alt),
        )
        if not v
    ]
    if missing:
        raise FigureError(
            f"{where}: the figure's metadata lacks {', '.join(missing)} (mystnb.figure / mystnb.image)"
        )


def with_figure(executed, source_cell, first_copy):
    """The executed cell with the source cell's figure metadata; ``first_copy``: whether this is the first cell
    of the page that shows this figure (the others refer to it by name). Displayed outputs without an image become
    printed text, so that myst-nb puts only the drawing into the figure."""
    cell = copy.deepcopy(executed)
    mystnb = copy.deepcopy(source_cell.metadata.get("mystnb"))
    if not mystnb:
        return cell
    name = mystnb.get("figure", {}).get("name")
    if name and not first_copy:
        del mystnb["figure"]["name"]
        cell.metadata.setdefault("d2l", {})["figure_of"] = name
    cell.metadata["mystnb"] = mystnb
    if figure_options(source_cell):
        outputs = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if out.get("output_type") in ("display_data", "execute_result") and not any(
                mime.startswith("image/") for mime in data
            ):
                text = data.get("text/plain", "")
                out = nbformat.v4.new_output("stream", name="stdout", text=text.rstrip("\n") + "\n")
            outputs.append(out)
        cell["outputs"] = outputs
    return cell
