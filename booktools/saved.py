"""Check that code a page shows as "Saved in d2lcore" is the package's code, and keep it so.

A code cell whose first line is ``# Saved in d2lcore: <path>`` shows definitions that live in that file of the
package. The page's code may call package helpers with the ``d2l.`` prefix that a reader's notebook uses
(``d2l.check_shapes``), where the package calls them by their bare name; apart from that and from comments and
formatting, each definition must be identical: the comparison is on the syntax trees.

A definition can need module-level statements besides itself: ``register_converter(GRU, ...)`` after ``class
GRU`` is what makes ``export_weights`` name a GRU's weights. Every statement of the package file that names a
shown definition (other than imports and definitions) must be shown in the same cell, to the letter, since a
notebook that ran the class without it would not behave as the package does.

Pages run what they show: a name that a page defines in a saved cell is called without ``d2l.`` afterwards, in
that framework's cells (``sync`` writes the cells so, and ``d2l_uses_of_shown_names`` finds the exceptions).
"""

import ast
import re
from pathlib import Path

from booktools.cells import frameworks_of
from booktools.paths import ROOT
from booktools.split import read_source
from d2lcore import FRAMEWORKS

MARKER = re.compile(r"^# Saved in d2lcore: (\S+)\s*$")
_DEFINITION = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class _DropPrefix(ast.NodeTransformer):
    """Rewrite ``d2l.name`` as ``name``."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "d2l":
            return ast.copy_location(ast.Name(id=node.attr, ctx=node.ctx), node)
        return node


def _is_docstring(node):
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _statements(tree):
    """The module-level statements of a tree that are neither definitions, imports nor docstrings."""
    return [
        node
        for node in tree.body
        if not isinstance(node, _DEFINITION | ast.Import | ast.ImportFrom)
        and not _is_docstring(node)
    ]


def _names_in(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _dump(node):
    return ast.dump(node, include_attributes=False)


def _definitions(code):
    tree = _DropPrefix().visit(ast.parse(code))
    return {node.name: _dump(node) for node in tree.body if isinstance(node, _DEFINITION)}


def _needed_statements(tree, names):
    """The module-level statements of ``tree`` that a notebook showing the definitions ``names`` needs: those that
    name one of them (e.g. a registration)."""
    return [node for node in _statements(tree) if _names_in(node) & set(names)]


def saved_cells(source):
    """(cell id, package file, cell code) of every "Saved in d2lcore" cell of a source."""
    return [(cell.id, package_file, cell.source) for cell, package_file in _saved(source)]


def _saved(source):
    found = []
    for cell in read_source(source).cells:
        if cell.cell_type != "code" or not cell.source:
            continue
        match = MARKER.match(cell.source.splitlines()[0])
        if match:
            found.append((cell, match.group(1)))
    return found


def mismatches(cell_code, package_file, root=ROOT):
    """What differs between a page cell and the package file: a list of messages, empty if they agree."""
    path = Path(root, package_file)
    if not path.is_file():
        return [f"{package_file} does not exist"]
    package_text = path.read_text(encoding="utf-8")
    package_tree = ast.parse(package_text)
    shown, package = _definitions(cell_code), _definitions(package_text)
    if not shown:
        return ["the cell defines no function or class"]
    problems = []
    for name, tree in shown.items():
        if name not in package:
            problems.append(f"{name} is not defined in {package_file}")
        elif tree != package[name]:
            problems.append(f"{name} differs from its definition in {package_file}")
    shown_statements = {
        _dump(node) for node in _statements(_DropPrefix().visit(ast.parse(cell_code)))
    }
    for node in _needed_statements(package_tree, shown):
        if _dump(node) not in shown_statements:
            needs = ", ".join(sorted(_names_in(node) & set(shown)))
            problems.append(
                f"the cell lacks the statement `{ast.unparse(node)}` of {package_file}, needed by {needs}"
            )
    return problems


def _reached_through_d2l(tree):
    """Names of a package module that a reader's notebook reaches as ``d2l.name``: those the module binds at
    top level (imports and definitions) that belong to the public interface."""
    from d2lcore.interface import NAMES

    public = set(NAMES)
    bound = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
    return bound & public


def page_code(package_file, names, root=ROOT, local=()):
    """The code a page shows for the definitions ``names`` of a package file: their source and the module-level
    statements they need, and the private definitions of the file that these call (unless the page defines them
    already, ``local``), in the file's order, with
    ``d2l.`` before every name that a notebook reaches through d2l (see _reached_through_d2l), except the names
    ``local`` that the page itself defines."""
    text = Path(root, package_file).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    missing = set(names) - {getattr(n, "name", None) for n in tree.body}
    if missing:
        raise KeyError(f"{package_file} does not define {sorted(missing)}")
    needed = _needed_statements(tree, names)
    defined = {n.name: n for n in tree.body if isinstance(n, _DEFINITION)}
    names = set(names)
    todo = [*needed, *(defined[name] for name in names if name in defined)]
    while todo:  # private helpers that the shown code calls, and theirs, unless the page defines them already
        for name in _names_in(todo.pop()):
            if name.startswith("_") and name in defined and name not in names and name not in local:
                names.add(name)
                todo.append(defined[name])
    prefixed = _reached_through_d2l(tree) - set(local) - names
    blocks = []
    for node in tree.body:
        if getattr(node, "name", None) not in names and not any(node is n for n in needed):
            continue
        # a definition starts at its first decorator (@checked, say)
        decorators = [d.lineno for d in getattr(node, "decorator_list", [])]
        start, end = min([node.lineno, *decorators]) - 1, node.end_lineno
        block = lines[start:end]
        # insert "d2l." at each use of an imported name, right to left within a line
        spots = sorted(
            (n.lineno - 1 - start, n.col_offset)
            for n in ast.walk(node)
            if isinstance(n, ast.Name) and n.id in prefixed
        )
        for row, col in reversed(spots):
            block[row] = block[row][:col] + "d2l." + block[row][col:]
        blocks.append("".join(block).rstrip("\n"))
    return "\n\n\n".join(blocks)


def _shown_names(code):
    return [node.name for node in ast.parse(code).body if isinstance(node, _DEFINITION)]


def sync(source):
    """Rewrite the "Saved in d2lcore" cells of a source from the package; return how many changed. A name the
    cell shows that the package no longer defines is dropped from the cell."""
    text = Path(source).read_text(encoding="utf-8")
    changed = 0
    local = {fw: set() for fw in FRAMEWORKS}  # names the page has defined so far, per framework
    for cell, package_file in _saved(source):
        code = cell.source
        tree = ast.parse(Path(ROOT, package_file).read_text(encoding="utf-8"))
        in_package = {getattr(n, "name", None) for n in tree.body}
        names = [name for name in _shown_names(code) if name in in_package]
        frameworks = frameworks_of(cell)
        here = set.intersection(*(local[fw] for fw in frameworks)) | set(names)
        new = code.splitlines()[0] + "\n" + page_code(package_file, names, local=here)
        for fw in frameworks:
            local[fw].update(_shown_names(new))
        if new != code:
            text = text.replace(code, new, 1)
            changed += 1
    Path(source).write_text(text, encoding="utf-8")
    return changed


def d2l_uses_of_shown_names(source):
    """(cell id, name) for each ``d2l.name`` in a code cell of ``source`` where that framework's notebook has
    already defined ``name`` in a saved cell: the page would show one class and run another."""
    local = {fw: set() for fw in FRAMEWORKS}
    found = []
    for cell in read_source(source).cells:
        if cell.cell_type != "code" or not cell.source:
            continue
        frameworks = frameworks_of(cell)
        known = set.intersection(*(local[fw] for fw in frameworks))
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython magics: not Python
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "d2l"
                and node.attr in known
            ):
                found.append((cell.id, node.attr))
        if MARKER.match(cell.source.splitlines()[0]):
            for fw in frameworks:
                local[fw].update(_shown_names(cell.source))
    return found
