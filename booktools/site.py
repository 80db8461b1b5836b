"""Stage the book's sources for Jupyter Book and build the HTML.

The staging folder _build/site mirrors the repository's book files: _config.yml, _toc.yml and chapters/, where
every notebook source is replaced by its merged, executed notebook. Jupyter Book renders it with execution off.
"""

import subprocess
import sys
from pathlib import Path

import nbformat

from booktools.merge import merge
from booktools.paths import CHAPTERS, HTML, ROOT, SITE, is_notebook, rel, sources, write_if_changed


def stage():
    """Fill _build/site, rewriting only files whose content changed; return the staged paths."""
    staged = set()
    for name in ("_config.yml", "_toc.yml"):
        write_if_changed(SITE / name, (ROOT / name).read_bytes())
        staged.add(SITE / name)
    notebooks = set(sources())
    for path in sorted(CHAPTERS.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or ".ipynb_checkpoints" in path.parts:
            continue
        if path.suffix == ".md" and (path in notebooks or is_notebook(path)):
            target = SITE / rel(path).with_suffix(".ipynb")
            write_if_changed(target, nbformat.writes(merge(path)) + "\n")
        else:
            target = SITE / rel(path)
            write_if_changed(target, path.read_bytes())
        staged.add(target)
    for stale in [p for p in SITE.rglob("*") if p.is_file() and p not in staged]:
        stale.unlink()
    return staged


def build_html(strict=True):
    """Run Jupyter Book on the staged book; the HTML lands in _build/html."""
    stage()
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", str(SITE), "--path-output", str(ROOT)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    print("$", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"the book build failed (exit {result.returncode}); see the warnings above")
    print(f"The book is in {rel(HTML)}/index.html", flush=True)
