"""Where things are, and which sources are notebooks."""

import hashlib
from pathlib import Path

import yaml

from d2lcore.frameworks import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
BUILD = ROOT / "_build"
NOTEBOOKS = BUILD / "notebooks"  # _build/notebooks/<framework>/chapters/.../<section>.ipynb
SITE = BUILD / "site"  # what Jupyter Book renders: merged notebooks and plain pages
HTML = BUILD / "html"
LOCALES = (
    ROOT / "locales"
)  # locales/<language>/LC_MESSAGES/<page>.po: the translations (booktools.i18n)
TIMINGS = BUILD / "timings.json"
DURATIONS = (
    ROOT / "booktools" / "durations.json"
)  # seconds per notebook when outputs were last recorded

LABELS = {name: fw.label for name, fw in REGISTRY.items()}


def is_notebook(path):
    """A chapter source is a notebook when its front matter declares a Jupyter kernel (jupytext's MyST format)."""
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return False
    front = yaml.safe_load(text[4 : text.index("\n---", 4)]) or {}
    return "kernelspec" in front


def sources(pattern=None):
    """The notebook sources under chapters/, in book order (the order of _toc.yml), optionally only those whose
    path contains ``pattern``."""
    found = [p for p in sorted(CHAPTERS.rglob("*.md")) if is_notebook(p)]
    order = {name: i for i, name in enumerate(toc_files())}
    found.sort(key=lambda p: order.get(rel(p).with_suffix("").as_posix(), len(order)))
    if pattern:
        found = [p for p in found if pattern in rel(p).as_posix()]
    return found


def toc_files():
    """Every file named in _toc.yml, in order, without suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            if "root" in node:
                names.append(node["root"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return names


def rel(path):
    """``path`` relative to the repository root (or unchanged if it lies elsewhere)."""
    path = Path(path).resolve()
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def notebook_path(source, framework):
    """The per-framework notebook of a source: _build/notebooks/<framework>/<source path>.ipynb."""
    return NOTEBOOKS / framework / rel(source).with_suffix(".ipynb")


def tree_hash(*paths, suffixes=(".py",)):
    """A SHA-256 over the contents of files (and of directories' files with ``suffixes``), in a stable order."""
    h = hashlib.sha256()
    for path in paths:
        path = Path(path)
        files = (
            sorted(f for f in path.rglob("*") if f.suffix in suffixes) if path.is_dir() else [path]
        )
        for f in files:
            h.update(rel(f).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def write_if_changed(path, data):
    """Write bytes or text to ``path`` only if its content differs, so that unchanged pages are not rebuilt."""
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True
