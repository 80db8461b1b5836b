"""The Sphinx extension on a one-page project: notebook downloads and "Open in Colab" links, with and without a
configured repository, in a strict (-W) build."""

import json

import pytest
from sphinx.cmd.build import build_main

from booktools.sphinx_ext import colab_links, colab_url
from d2lcore.frameworks import FRAMEWORKS


def build(tmp_path, *defines):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["booktools.sphinx_ext"]\nproject = "t"\n')
    (src / "index.rst").write_text("A Section\n=========\n\nSome text.\n")
    for fw in FRAMEWORKS:  # the page's per-framework notebooks, where the book's build puts them
        folder = tmp_path / "notebooks" / fw
        folder.mkdir(parents=True)
        (folder / "index.ipynb").write_text(json.dumps({"cells": [], "metadata": {}}))
    args = ["-W", "-q", "-b", "html", *[f"-D{d}" for d in defines], str(src), str(out)]
    assert build_main(args) == 0, "the strict build failed (warnings are errors)"
    return (out / "index.html").read_text(encoding="utf-8")


def test_without_a_repository_there_are_no_colab_links(tmp_path):
    html = build(tmp_path)
    assert html.count('class="d2l-download ') == len(FRAMEWORKS)
    assert "d2l-colab" not in html.replace("d2l.js", "")


def test_colab_links_follow_the_configured_repository(tmp_path):
    html = build(tmp_path, "d2l_repository=someone/attention-book", "d2l_notebooks_branch=pages-nb")
    for fw in FRAMEWORKS:
        url = f"https://colab.research.google.com/github/someone/attention-book/blob/pages-nb/{fw}/index.ipynb"
        assert f'href="{url}" data-framework="{fw}"' in html
    assert html.count('class="d2l-colab"') == len(FRAMEWORKS)
    assert "d2l.js" in html


def test_colab_url_and_bad_repositories():
    assert (
        colab_url("a/b", "nb", "pytorch", "chapters/x/y")
        == "https://colab.research.google.com/github/a/b/blob/nb/pytorch/chapters/x/y.ipynb"
    )
    assert colab_links("", "notebooks", "index") == ""
    for bad in ("https://github.com/a/b", "a", "a/b/c", "a b/c"):
        with pytest.raises(ValueError, match="'owner/name'"):
            colab_links(bad, "notebooks", "index")
