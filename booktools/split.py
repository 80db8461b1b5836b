"""Split a MyST source into one plain notebook per framework.

Cells tagged ``mxnet``, ``pytorch`` or ``tensorflow`` go to that framework's notebook; untagged cells go to all
three. Every source cell gets a fixed id (``c000``, ``c001``, ... in source order), the same in every notebook, so
that the merge can line the executed cells up again. Local images in markdown are embedded as attachments, so a
downloaded notebook shows its figures.

A notebook is made to run wherever a reader opens it: its kernel is the standard ``python3`` (the book's own
execution picks the framework's kernel by name), and it starts with a setup cell (id ``setup``, tag
``d2l-setup``) that says what to install and installs ``d2lcore[<framework>]`` where ``d2lcore`` is missing, as on
a fresh cloud runtime; where it is installed, the cell changes nothing. The setup cell has no source cell, so the
merged page never shows it.

Hints and solutions are ``dropdown`` directives in a colon fence (``:::{dropdown} Hint``, closed by ``:::``),
which the book renders as boxes that open on a click. Jupyter does not know MyST directives, so the split writes
each one as the HTML element that Jupyter and Colab show the same way, ``<details>`` with the title as its
``<summary>``, keeping the indentation of the fence (a dropdown may sit inside a list item). The one other
directive of a section, the note for readers of D2L (``:::{admonition} For readers of D2L``, with a ``:class:``
line), becomes a Markdown quote that starts with its title in bold.
"""

import base64
import mimetypes
import re
from pathlib import Path

import jupytext
import nbformat

from booktools.cells import frameworks_of
from booktools.figures import IMAGE
from booktools.labels import plain_references
from booktools.links import rewrite_links
from booktools.paths import ROOT, rel
from d2lcore import __version__
from d2lcore.frameworks import REGISTRY

DROPDOWN = re.compile(r"^([ \t]*):::\{dropdown\}[ \t]*(.*?)[ \t]*\n(.*?)^\1:::[ \t]*$", re.M | re.S)
ADMONITION = re.compile(
    r"^:::\{admonition\}[ \t]*(.*?)[ \t]*\n((?::\w+:[^\n]*\n)*)(.*?)^:::[ \t]*$", re.M | re.S
)

SETUP_TAG = "d2l-setup"
NOTICE = (ROOT / "LICENSE").read_text(encoding="utf-8").splitlines()[2].replace("(c)", "©")
"""The book's copyright line, from LICENSE (``Copyright © <year> <holders>``)."""
SETUP = """\
# {notice}. Text and code under the MIT License (the LICENSE file of the book's repository).
# This notebook needs d2lcore for {label}: pip install "{requirement}"
# Where d2lcore is missing (a fresh cloud runtime such as Colab), this cell installs it; where it is
# installed, it does nothing. See the book's page "Running the Notebooks".
import importlib.metadata
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lcore") is None:
    numpy = sys.modules.get("numpy")
    pip = [sys.executable, "-m", "pip", "install", "-q", "{requirement}"]
    subprocess.run(pip, check=True)
    importlib.invalidate_caches()
    if numpy is not None and importlib.metadata.version("numpy") != numpy.__version__:
        raise SystemExit("NumPy was replaced while in use: restart the runtime, then run all cells again.")
"""


WHEEL = f"d2lcore-{__version__}-py3-none-any.whl"
"""The file name of this version's wheel: ``make dist`` builds it, and the site offers it next to the notebook
zips (``notebooks/<wheel>``) until d2lcore is published on PyPI."""


def requirement(framework, wheel_url=None):
    """What ``framework``'s notebooks install: d2lcore with the framework's extra, from PyPI (this version), or
    from ``wheel_url``, the wheel on the book's site."""
    extra = REGISTRY[framework].extra
    if wheel_url:
        return f"d2lcore[{extra}] @ {wheel_url}"
    return f"d2lcore[{extra}]=={__version__}"


def setup_source(framework, wheel_url=None):
    """The code of the setup cell (see :func:`requirement` for ``wheel_url``)."""
    label = REGISTRY[framework].label
    return SETUP.format(notice=NOTICE, label=label, requirement=requirement(framework, wheel_url))


def setup_cell(framework):
    """The first cell of ``framework``'s notebooks: what to install, and installing it where it is missing. The
    book's build installs nothing (d2lcore is there); the site's copies name where d2lcore is published
    (booktools.sphinx_ext)."""
    cell = nbformat.v4.new_code_cell(setup_source(framework))
    cell.id = "setup"
    cell.metadata = {"tags": [SETUP_TAG]}
    return cell


def read_source(source):
    """The source as a notebook, with the fixed cell ids."""
    nb = jupytext.read(source, fmt="md:myst")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"
    return nb


def details(text):
    """``text`` with every ``:::{dropdown} Title`` ... ``:::`` block written as ``<details>`` with the summary
    ``Title``, for Jupyter; ValueError for a dropdown that is never closed or that has options."""

    def html(match):
        indent, title, body = match.groups()
        if body.lstrip().startswith(":"):
            raise ValueError(f"dropdown {title!r}: options are not supported in sections")
        return (
            f"{indent}<details><summary>{title}</summary>\n\n{body.rstrip()}\n\n{indent}</details>"
        )

    converted = DROPDOWN.sub(html, text)
    if ":::{dropdown}" in converted:
        raise ValueError("a dropdown in a section is not closed by ':::' at its own indentation")
    return converted


def quotes(text):
    """``text`` with every ``:::{admonition} Title`` ... ``:::`` block (its option lines dropped) written as a
    Markdown quote whose first line is the title in bold, for Jupyter."""

    def quote(match):
        title, _options, body = match.groups()
        lines = [f"**{title}**", "", *body.strip("\n").splitlines()]
        return "\n".join(f"> {line}".rstrip() for line in lines)

    return ADMONITION.sub(quote, text)


def _embed_images(cell, folder):
    """Replace links to local images by attachments of the cell."""
    attachments = {}

    def attach(match):
        alt, target, caption = match.groups()
        if "://" in target or target.startswith("attachment:"):
            return match.group(0)
        path = (folder / target).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"image {target!r} in cell {cell['id']} not found at {path}")
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        name = path.name
        attachments[name] = {mime: base64.b64encode(path.read_bytes()).decode("ascii")}
        title = f' "{caption}"' if caption else ""
        return f"![{alt}](attachment:{name}{title})"

    cell["source"] = IMAGE.sub(attach, cell["source"])
    if attachments:
        cell["attachments"] = attachments


def for_jupyter(cell, folder, known=None, numbered="Section %s"):
    """Make a markdown cell of a page in ``folder`` plain Markdown for Jupyter (in place): Jupyter knows no
    labels, so references become plain links (``known`` and ``numbered``: those of
    :func:`booktools.labels.plain_references`); dropdowns become ``<details>``, the admonition a quote, local
    images attachments."""
    text = plain_references(cell.source, folder, known, numbered)
    cell.source = quotes(details(rewrite_links(text, folder)))
    _embed_images(cell, folder)


def split(source, framework):
    """The notebook of ``framework`` for ``source``: a new ``nbformat`` notebook, not yet executed."""
    source = Path(source)
    nb = read_source(source)
    out = nbformat.v4.new_notebook()
    out.metadata = {
        # every Jupyter has this kernel; the book executes the notebook in the framework's own kernel instead
        "kernelspec": {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        },
        "language_info": {"name": "python"},
        "d2l": {"framework": framework, "source": rel(source).as_posix()},
    }
    out.cells.append(setup_cell(framework))
    for cell in nb.cells:
        if framework not in frameworks_of(cell):
            continue
        cell = nbformat.from_dict(dict(cell))
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in ("tags",)}
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "markdown":
            for_jupyter(cell, source.parent)
        out.cells.append(cell)
    nbformat.validate(out)
    return out
