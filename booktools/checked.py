"""Checked notebooks: a framework's notebooks as readers download them, with the outputs that the book records for
their checked cells, so that plain nbval validates them wherever they run.

The notebooks come from the built site's zip (``_build/html/notebooks/<framework>.zip``, the files the pages
link); each checked cell (tag ``nbval-check-output``) gets the outputs recorded in
``chapters/<chapter>/expected/<section>.<framework>.json`` (booktools/expected.py), the same ones ``make nbval``
compares with. Then nbval needs nothing from the book: only the framework, d2lcore, nbval and Jupyter's kernel,
as on a GPU machine or a cloud runtime::

    python -m booktools checked-notebooks --framework pytorch --out checked
    python -m pytest -p no:cacheprovider --nbval-lax --nbval-current-env checked/pytorch

``make nbval`` runs the same check, on the same notebooks before the site is built, in fresh environments outside
the clone (booktools/standalone.py).
"""

import zipfile
from pathlib import Path

import nbformat

from booktools.expected import inject, is_checked
from booktools.paths import HTML, ROOT, toc_files


class NotCheckable(RuntimeError):
    """The site's notebooks are missing, or their checked cells and the recorded outputs disagree."""


def notebooks_from_site(framework, folder, html=HTML):
    """Unpack the site's zip of ``framework``'s notebooks into ``folder``; return them in book order."""
    archive = Path(html) / "notebooks" / f"{framework}.zip"
    if not archive.is_file():
        raise NotCheckable(f"{archive} is missing: run `make html` first")
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(folder)
        names = zf.namelist()
    order = {name: i for i, name in enumerate(toc_files())}

    def position(name):
        docname = Path(name).relative_to(framework).with_suffix("").as_posix()
        return order.get(docname, len(order))

    return [Path(folder) / name for name in sorted(names, key=position)]


def write_checked(framework, folder, html=HTML):
    """Write ``framework``'s notebooks from the site into ``folder/<framework>/...``, with the recorded outputs
    in their checked cells; return ``[(path, number of checked cells)]`` in book order."""
    written = []
    for path in notebooks_from_site(framework, folder, html):
        nb = nbformat.read(path, as_version=4)
        source = ROOT / nb.metadata["d2l"]["source"]
        unrecorded, stale = inject(nb, source, framework)
        if unrecorded or stale:
            raise NotCheckable(
                f"{path.name}: {len(unrecorded)} checked cells without recorded outputs and "
                f"{len(stale)} recorded outputs without a cell; run make nbval"
            )
        nbformat.write(nb, path)
        written.append((path, sum(1 for cell in nb.cells if is_checked(cell))))
    return written
