"""The API page's ``d2l-api`` directive (booktools.api) on a one-page project, in a strict build (-W -n): every
public name, by section, with the signature and docstring of its PyTorch code."""

import html
import inspect
import re

from sphinx.cmd.build import build_main

from booktools.api import literal_roles
from d2lcore import common
from d2lcore.interface import NAMES, SECTIONS


def test_literal_roles():
    text = (
        "see :func:`_heatmap_size`, :class:`~d2lcore.records.Record` and :py:meth:`the call <a.b>`"
    )
    assert (
        literal_roles(text) == "see ``_heatmap_size``, ``d2lcore.records.Record`` and ``the call``"
    )


def test_the_page_shows_every_name_from_its_code(tmp_path):
    import d2lcore.torch as d2l

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["booktools.sphinx_ext"]\nproject = "t"\nd2l_install_from = "pypi"\n'
    )
    (src / "index.rst").write_text("The Library\n===========\n\n.. d2l-api::\n")
    assert build_main(["-W", "-n", "-q", "-b", "html", str(src), str(out)]) == 0, (
        "the strict build failed"
    )
    page = (out / "index.html").read_text(encoding="utf-8")
    shown = re.findall(r'sig-name descname"><span class="pre">(\w+)<', page)
    top_level = [name for name in shown if name in NAMES]
    assert top_level == list(NAMES), "every name once, in the order of d2lcore.interface.SECTIONS"
    text = html.unescape(re.sub(r"<[^>]+>", "", page)).replace("’", "'")  # Sphinx's smart quotes
    for title in SECTIONS:
        assert f"{title}¶" in text, title
    assert "**Bad inputs.**" not in text and "Bad inputs." in text, (
        "the interface's docstring, rendered"
    )
    # PyTorch's signatures and docstrings, as its code has them
    assert "class AddNorm(num_hiddens, dropout)" in text
    assert "forward(queries, keys, values, valid_lens=None)" in text
    assert inspect.getdoc(d2l.set_seed).splitlines()[0] in text
    # the neutral names, and only they, are marked
    assert text.count("neutral. ") == sum(hasattr(common, name) for name in NAMES)
