"""Links between pages: authors link to a section's source, ``[text](attention-cues.md)``; in the built book and
in the per-framework notebooks that section is a notebook, so such links are rewritten to ``.ipynb``."""

import re
from pathlib import Path

from booktools.paths import is_notebook

LINK = re.compile(r"(\]\()([^)\s#:]+\.md)((?:#[^)\s]*)?\))")


def rewrite_links(text, folder):
    """``text`` with every relative link to a notebook source (resolved from ``folder``) ending in .ipynb."""

    def fix(match):
        target = Path(folder, match.group(2))
        if target.is_file() and is_notebook(target):
            return match.group(1) + match.group(2)[: -len(".md")] + ".ipynb" + match.group(3)
        return match.group(0)

    return LINK.sub(fix, text)
