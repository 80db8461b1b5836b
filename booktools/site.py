"""Stage the book's sources for Jupyter Book and build the HTML.

The staging folder _build/site mirrors the repository's book files: _config.yml, _toc.yml and chapters/, where
every notebook source is replaced by its merged, executed notebook. Jupyter Book renders it with execution off.

The repository that "Open in Colab" points at is named in _config.yml (``d2l_repository``); where it is left
empty, the environment variable ``D2L_REPOSITORY`` fills it in (the publishing workflow sets it to the repository
it runs in, and ``make test`` to a test name), and without either the pages have no Colab links.
"""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from booktools.expected import FOLDER as EXPECTED
from booktools.i18n import site_languages
from booktools.links import rewrite_links
from booktools.merge import merge
from booktools.paths import CHAPTERS, HTML, ROOT, SITE, rel, sources, write_if_changed
from booktools.vendor import ensure_mathjax


def stage(languages=None):
    """Fill _build/site, rewriting only files whose content changed; return the staged paths. ``languages``: those
    the site is built in besides English, which every page's language menu lists (default: the published ones)."""
    staged = {SITE / "_config.yml", SITE / "_toc.yml"}
    write_if_changed(SITE / "_toc.yml", (ROOT / "_toc.yml").read_bytes())
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["d2l_languages"] = site_languages(languages)
    if not sphinx_config.get("d2l_repository"):
        sphinx_config["d2l_repository"] = os.environ.get("D2L_REPOSITORY", "")
    mathjax = ensure_mathjax()
    if mathjax is not None:  # serve MathJax with the book instead of from its CDN
        sphinx_config["mathjax_path"] = "mathjax/tex-chtml.js"
        # not _static: Jupyter Book adds a script tag for every .js file there
        sphinx_config["html_static_path"] = ["_vendor"]
        for path in sorted(mathjax.rglob("*")):
            if path.is_file():
                target = SITE / "_vendor" / "mathjax" / path.relative_to(mathjax)
                write_if_changed(target, path.read_bytes())
                staged.add(target)
    write_if_changed(SITE / "_config.yml", yaml.safe_dump(config, sort_keys=False))
    notebooks = set(sources())
    for path in sorted(CHAPTERS.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or ".ipynb_checkpoints" in path.parts:
            continue
        if path.parent.name == EXPECTED:  # what make nbval compares with, not a page
            continue
        if path in notebooks:
            target = SITE / rel(path).with_suffix(".ipynb")
            write_if_changed(target, nbformat.writes(merge(path)) + "\n")
        elif path.suffix == ".md":
            target = SITE / rel(path)
            write_if_changed(target, rewrite_links(path.read_text(encoding="utf-8"), path.parent))
        else:
            target = SITE / rel(path)
            write_if_changed(target, path.read_bytes())
        staged.add(target)
    for stale in [p for p in SITE.rglob("*") if p.is_file() and p not in staged]:
        stale.unlink()
    return staged


def build_html(strict=True, languages=None):
    """Run Jupyter Book on the staged book; the HTML lands in _build/html."""
    stage(languages)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", str(SITE), "--path-output", str(ROOT)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    print("$", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(
            f"the book build failed (exit {result.returncode}); see the warnings above"
        )
    print(f"The book is in {rel(HTML)}/index.html", flush=True)
