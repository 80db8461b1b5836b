"""The ``d2l-api`` directive: the API page, rendered from the implementations, never from restated signatures.

``d2lcore/interface.py`` lists the public names by section (``SECTIONS``) and says, in its docstring, what holds
for all of them. The directive renders that docstring (all but its first two paragraphs, about the module
itself), then one section per entry of ``SECTIONS`` and in it, for each name, the signature and the docstring of
the PyTorch implementation (``d2lcore.torch.<name>``): for a class, its constructor and the members it defines
itself (``forward``, ``init_state``, properties such as ``attention_weights``). tests/test_interface.py holds
MXNet and TensorFlow to the same signatures, so one framework's code documents the three. A name that
``d2lcore.common`` re-exports is one framework-neutral object in every framework module (tests/test_interface.py
checks that too) and is marked *neutral*.

This is the one place where booktools loads a framework module: in the Sphinx process of the book's build, whose
environment has every framework, to read signatures and docstrings (``inspect``). It is loaded by its name in
:mod:`d2lcore.frameworks`, not imported by this module's code.

Docstrings are written as reStructuredText. Their cross-references (``:func:`x```, ``:class:`x```) become
literals: many point at names the page does not describe (a private helper, ``Record``), which the book's strict
build (``-n``) would refuse, and the page indexes nothing (``:no-index:``). The source file of every rendered
object is a dependency of the page, so an edited docstring or signature re-renders it. What the directive renders
is no message for translators (every edition shows d2lcore's docstrings in English, as ``help()`` does) and
carries the class ``d2l-api``.

Use it in a MyST page inside an ``{eval-rst}`` block::

    ```{eval-rst}
    .. d2l-api::
    ```

Its content, if any, is the titles of the sections to render, one per line (a page of the API in several parts,
so that none is too long to read); without content it renders them all. The interface's docstring comes with
the part that holds the first section. tests/test_api_page.py checks that the parts of the book's API pages
hold every section once, in order.
"""

import importlib
import inspect
import re
import sys
import types

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from d2lcore.frameworks import REGISTRY

REFERENCE = "pytorch"
"""The framework whose implementations the page shows."""

ROLE = re.compile(r":(?:py:)?[a-z]+:`[~!]?([^`<]+?)(?:\s*<[^`]*>)?`")
"""A cross-reference role such as :func:`x`, :class:`~d2lcore.records.Record` or :meth:`a <b>`."""

NEUTRAL = "*neutral.* "
MEMBERS_ALSO = ("__len__", "__getitem__")
"""Special methods shown with a class's public members (a Vocab's ``len(vocab)`` and ``vocab[tokens]``)."""


def literal_roles(text):
    """``text`` with every cross-reference role replaced by a literal of its target's name."""
    return ROLE.sub(lambda m: f"``{m.group(1).strip()}``", text)


def _doc(obj):
    """The own docstring of ``obj`` (never one inherited from a framework's base class), dedented, roles literal."""
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    return literal_roles(inspect.cleandoc(doc)) if doc else ""


def _plain(signature, drop_first=False):
    """``signature`` as text, without annotations (the book's code has none but NamedTuple's fields) and, for a
    method, without ``self``."""
    params = list(signature.parameters.values())[1 if drop_first else 0 :]
    params = [p.replace(annotation=inspect.Parameter.empty) for p in params]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


def _indent(text, spaces):
    pad = " " * spaces
    return [pad + line if line.strip() else "" for line in text.splitlines()]


def _entry(directive, signature, doc, options=(), spaces=0):
    """The reStructuredText lines of one object description."""
    pad = " " * spaces
    lines = [f"{pad}.. py:{directive}:: {signature}", f"{pad}   :no-index:"]
    lines += [f"{pad}   {option}" for option in options]
    if doc:
        lines += ["", *_indent(doc, spaces + 3)]
    return [*lines, ""]


def _members(cls):
    """The (name, value) of the public methods and properties that ``cls`` defines itself, in its order."""
    for name, value in vars(cls).items():
        if name.startswith("_") and name not in MEMBERS_ALSO:
            continue
        if isinstance(value, property | staticmethod | classmethod) or inspect.isfunction(value):
            yield name, value


def _member_lines(name, value):
    if isinstance(value, property):
        return _entry("property", name, _doc(value), spaces=3)
    function = value.__func__ if isinstance(value, staticmethod | classmethod) else value
    options = {staticmethod: [":staticmethod:"], classmethod: [":classmethod:"]}.get(
        type(value), []
    )
    drop_first = not isinstance(value, staticmethod)
    signature = f"{name}{_plain(inspect.signature(function), drop_first)}"
    return _entry("method", signature, _doc(function), options, spaces=3)


def _constant_doc(name, value):
    """The docstring written below ``NAME = ...`` in the d2lcore module that assigns it, or ""."""
    for module_name in sorted(sys.modules):
        module = sys.modules[module_name]
        if module_name.split(".")[0] != "d2lcore" or getattr(module, name, None) is not value:
            continue
        try:
            docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        except Exception:  # a module without source (none in d2lcore): look further
            continue
        if ("", name) in docs:
            return literal_roles("\n".join(docs["", name]).strip())
    return ""


def name_lines(name, obj, neutral):
    """The reStructuredText lines that describe the public name ``name``, bound to ``obj``."""
    mark = NEUTRAL if neutral else ""
    if inspect.isclass(obj):
        try:
            signature = f"{name}{_plain(inspect.signature(obj))}"
        except (TypeError, ValueError):
            signature = name
        lines = _entry("class", signature, mark + _doc(obj))
        for member, value in _members(obj):
            lines += _member_lines(member, value)
        return lines
    if callable(obj):
        return _entry("function", f"{name}{_plain(inspect.signature(obj))}", mark + _doc(obj))
    if isinstance(obj, types.ModuleType):
        return _entry("data", name, f"{mark}The module ``{obj.__name__}``.")
    return _entry("data", name, mark + _constant_doc(name, obj), [f":value: {obj!r}"])


def _source(obj):
    """The source file of a class or function, else None (a constant, a module such as plt)."""
    if not (inspect.isclass(obj) or callable(obj)):
        return None
    return inspect.getsourcefile(obj if inspect.isclass(obj) else inspect.unwrap(obj))


class Api(SphinxDirective):
    """``.. d2l-api::``: the interface's docstring, then every public name by section (see the module's docstring)."""

    has_content = True

    def run(self):
        from d2lcore import common, interface

        module = importlib.import_module(REGISTRY[REFERENCE].module)
        self.env.note_dependency(inspect.getsourcefile(interface))
        titles = [line.strip() for line in self.content if line.strip()] or list(interface.SECTIONS)
        unknown = [title for title in titles if title not in interface.SECTIONS]
        if unknown:
            raise self.error(
                f"d2l-api: {unknown} are not sections of d2lcore/interface.py; its sections are "
                f"{list(interface.SECTIONS)}"
            )
        lines = []
        if titles[0] == next(iter(interface.SECTIONS)):
            # the docstring without its first two paragraphs, which say what the page's introduction says
            intro = inspect.cleandoc(interface.__doc__).split("\n\n", 2)[2]
            lines += [*literal_roles(intro).splitlines(), ""]
        for title in titles:
            names = interface.SECTIONS[title]
            lines += [title, "-" * len(title), ""]
            for name in names:
                obj = getattr(module, name)
                lines += name_lines(name, obj, getattr(common, name, None) is obj)
                source = _source(obj)
                if source:
                    self.env.note_dependency(source)
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(
            self.state, StringList(lines, source="d2lcore/interface.py"), container
        )
        # the reference is d2lcore's docstrings, which help() shows in English: every edition shows them so, and
        # they are not messages for translators (booktools/i18n.py)
        # (not inline nodes, which are never messages: Sphinx unwraps an inline node that has the attribute)
        for node in container.findall(nodes.TextElement):
            if not isinstance(node, nodes.Inline):
                node["translatable"] = False
        # marked, so that tests/test_browser_languages.py knows the English paragraphs that belong on the page
        for node in container.children:
            node["classes"].append("d2l-api")
        return container.children


def setup(app):
    app.add_directive("d2l-api", Api)
