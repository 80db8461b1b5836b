"""Split a MyST source into one plain notebook per framework.

Cells tagged ``mxnet``, ``pytorch`` or ``tensorflow`` go to that framework's notebook; untagged cells go to all
three. Every source cell gets a fixed id (``c000``, ``c001``, ... in source order), the same in every notebook, so
that the merge can line the executed cells up again. Local images in markdown are embedded as attachments, so a
downloaded notebook shows its figures.
"""

import base64
import mimetypes
import re
from pathlib import Path

import jupytext
import nbformat

from booktools.cells import frameworks_of
from booktools.links import rewrite_links
from booktools.paths import KERNELS, rel
from d2lcore.frameworks import REGISTRY

IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


def read_source(source):
    """The source as a notebook, with the fixed cell ids."""
    nb = jupytext.read(source, fmt="md:myst")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"
    return nb


def _embed_images(cell, folder):
    """Replace links to local images by attachments of the cell."""
    attachments = {}

    def attach(match):
        alt, target = match.groups()
        if "://" in target or target.startswith("attachment:"):
            return match.group(0)
        path = (folder / target).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"image {target!r} in cell {cell['id']} not found at {path}")
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        name = path.name
        attachments[name] = {mime: base64.b64encode(path.read_bytes()).decode("ascii")}
        return f"![{alt}](attachment:{name})"

    cell["source"] = IMAGE.sub(attach, cell["source"])
    if attachments:
        cell["attachments"] = attachments


def split(source, framework):
    """The notebook of ``framework`` for ``source``: a new ``nbformat`` notebook, not yet executed."""
    source = Path(source)
    nb = read_source(source)
    out = nbformat.v4.new_notebook()
    out.metadata = {
        "kernelspec": {
            "name": KERNELS[framework],
            "display_name": REGISTRY[framework].kernel_display_name,
            "language": "python",
        },
        "language_info": {"name": "python"},
        "d2l": {"framework": framework, "source": rel(source).as_posix()},
    }
    for cell in nb.cells:
        if framework not in frameworks_of(cell):
            continue
        cell = nbformat.from_dict(dict(cell))
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in ("tags",)}
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "markdown":
            cell.source = rewrite_links(cell.source, source.parent)
            _embed_images(cell, source.parent)
        out.cells.append(cell)
    nbformat.validate(out)
    return out
