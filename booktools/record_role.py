"""The ``{record}`` role on the site: prose quotes a record of the executed notebooks (:mod:`booktools.quotes`).

The merge (:mod:`booktools.merge`) checks every role of a page against the executed notebooks but leaves the role in
the markdown, so that the page's messages for translators hold the role, not this build's figure: a new result then
changes no translation, and each language's build fills in the same figures. Here the role becomes its value
(:func:`booktools.quotes.fill`): in a framework's prose (a tab of the ``framework`` group), that framework's value;
in shared prose, the value once where the three frameworks agree, else each framework's value in a
``<span class="d2l-per-framework">``. Figures are written as the page's language writes them
(:func:`booktools.quotes.localised`: ``0,36`` in Russian, ``%46`` in Turkish).
"""

from pathlib import Path

import nbformat
from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx_design.shared import is_component

from booktools.quotes import ROLE, fill
from booktools.records import notebook_records
from d2lcore import FRAMEWORKS


class record_quote(nodes.Inline, nodes.TextElement):
    """A ``{record}`` role until :class:`RecordQuotes` replaces it by its value."""


def record_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    role = f"{{record}}`{text}`"
    if ROLE.fullmatch(role) is None:
        message = inliner.reporter.error(
            f"a record role reads {{record}}`name.field` or {{record}}`name.field:spec`; got {text!r}",
            line=lineno,
        )
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    node = record_quote(rawtext, "")
    node["role"] = role
    return [node], []


def _tab_framework(node):
    """The framework whose tab holds ``node``, or None in shared prose."""
    while node is not None:
        if is_component(node, "tab-item") and node.children:
            sync = node.children[0].get("sync_id")
            if sync in FRAMEWORKS:
                return sync
        node = node.parent
    return None


class RecordQuotes(SphinxTransform):
    """Replace each record role of a page by its value. The records come from the page's executed per-framework
    notebooks, in ``d2l_notebooks_dir``."""

    default_priority = 506  # after the page's messages are translated (priority 20)

    def apply(self, **kwargs):
        quotes = list(self.document.findall(record_quote))
        if not quotes:
            return
        docname = self.env.docname
        folder = Path(self.app.srcdir, self.config.d2l_notebooks_dir)
        records = {
            fw: notebook_records(nbformat.read(folder / fw / f"{docname}.ipynb", as_version=4))
            for fw in FRAMEWORKS
        }
        language = self.config.language
        for node in quotes:
            mine = _tab_framework(node)
            text = fill(
                node["role"], records, (mine,) if mine else FRAMEWORKS, docname, True, language
            )
            if text.startswith("<span"):
                node.replace_self(nodes.raw("", text, format="html"))
            else:
                node.replace_self(nodes.Text(text))


def setup(app):
    app.add_role("record", record_role)
    app.add_transform(RecordQuotes)
