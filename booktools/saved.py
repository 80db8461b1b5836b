"""Check that code a page shows as "Saved in d2lcore" is the package's code.

A code cell whose first line is ``# Saved in d2lcore: <path>`` shows definitions that live in that file of the
package. The page's code may call package helpers with the ``d2l.`` prefix that a reader's notebook uses
(``d2l.check_shapes``), where the package calls them by their bare name; apart from that and from comments and
formatting, each definition must be identical: the comparison is on the syntax trees.
"""

import ast
import re
from pathlib import Path

from booktools.paths import ROOT
from booktools.split import read_source

MARKER = re.compile(r"^# Saved in d2lcore: (\S+)\s*$")


class _DropPrefix(ast.NodeTransformer):
    """Rewrite ``d2l.name`` as ``name``."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "d2l":
            return ast.copy_location(ast.Name(id=node.attr, ctx=node.ctx), node)
        return node


def _definitions(code):
    tree = _DropPrefix().visit(ast.parse(code))
    return {
        node.name: ast.dump(node, include_attributes=False)
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def saved_cells(source):
    """(cell id, package file, cell code) of every "Saved in d2lcore" cell of a source."""
    found = []
    for cell in read_source(source).cells:
        if cell.cell_type != "code" or not cell.source:
            continue
        match = MARKER.match(cell.source.splitlines()[0])
        if match:
            found.append((cell.id, match.group(1), cell.source))
    return found


def mismatches(cell_code, package_file, root=ROOT):
    """What differs between a page cell and the package file: a list of messages, empty if they agree."""
    path = Path(root, package_file)
    if not path.is_file():
        return [f"{package_file} does not exist"]
    shown, package = _definitions(cell_code), _definitions(path.read_text(encoding="utf-8"))
    if not shown:
        return ["the cell defines no function or class"]
    problems = []
    for name, tree in shown.items():
        if name not in package:
            problems.append(f"{name} is not defined in {package_file}")
        elif tree != package[name]:
            problems.append(f"{name} differs from its definition in {package_file}")
    return problems


def _reached_through_d2l(tree):
    """Names of a package module that a reader's notebook reaches as ``d2l.name``: those the module binds at
    top level (imports and definitions) that belong to the public interface."""
    from d2lcore import interface

    public = {name for name in vars(interface) if not name.startswith("_")}
    bound = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
    return bound & public


def page_code(package_file, names, root=ROOT):
    """The code a page shows for the definitions ``names`` of a package file: their source, with ``d2l.``
    before every name that a notebook reaches through d2l (see _reached_through_d2l)."""
    text = Path(root, package_file).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    prefixed = _reached_through_d2l(tree)
    blocks = []
    for node in tree.body:
        if getattr(node, "name", None) not in names:
            continue
        start, end = node.lineno - 1, node.end_lineno
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
    missing = set(names) - {getattr(n, "name", None) for n in tree.body}
    if missing:
        raise KeyError(f"{package_file} does not define {sorted(missing)}")
    return "\n\n\n".join(blocks)


def sync(source):
    """Rewrite the "Saved in d2lcore" cells of a source from the package; return how many changed."""
    text = Path(source).read_text(encoding="utf-8")
    changed = 0
    for _, package_file, code in saved_cells(source):
        marker, names = code.splitlines()[0], list(_definitions(code))
        new = marker + "\n" + page_code(package_file, names)
        if new != code:
            text = text.replace(code, new, 1)
            changed += 1
    Path(source).write_text(text, encoding="utf-8")
    return changed
