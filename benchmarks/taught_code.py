"""What the pages teach, counted: the code lines of the framework cells that define classes or functions, split
into argument checks, speed and graph machinery, and the model; the lines of multi-head attention with what it
needs; and the page imports of d2lcore's replacements of a framework's own classes.

    .venv/bin/python benchmarks/taught_code.py            # the table of the working tree
    .venv/bin/python benchmarks/taught_code.py --json     # the same figures as JSON

A code line is a line of a cell that is not blank, not a comment and not part of a docstring. Each is put in the
first class that fits:

- other: imports, decorators (``@d2l.checked``), ``def`` and ``class`` lines, ``super().__init__()``;
- check: a statement that calls a check (``check_...(``, ``valid_lens_spec``, ``query_checker``), a ``raise`` or
  ``assert``, and the whole of an ``if`` whose body only raises;
- machinery: a statement that names a speed or graph device rather than the model (see ``MACHINERY``);
- model: the rest: the computation, its bookkeeping, returns.

A statement's lines are counted together (a check call over three lines is three check lines); a compound
statement (``if``, ``for``, ``with``) is classified by its own lines, its body statement by statement.

The multi-head figure counts the code lines, by the same rules, of the package's ``masked_softmax``,
``DotProductAttention``, ``transpose_qkv``, ``transpose_output`` and ``MultiHeadAttention`` in each framework (with
their private helpers in the same files).
"""

import argparse
import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = {"mxnet": "mxnet", "pytorch": "torch", "tensorflow": "tensorflow"}
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
TAGS = re.compile(r"^:tags: \[([^\]]*)\]", re.M)
CHECK_CALL = re.compile(r"\b_?check_\w*\(|\bvalid_lens_spec\(|\bquery_checker\(|\bmarked\(")
MACHINERY = re.compile(
    r"hybridize|tf\.function|jit_compile|short_rows|row_softmax|empty_rows|\.attend\(|fix_keys|prepare_keys"
    r"|AdditiveStep|AttentionGRUSteps|_version|_last_lengths|concrete_function|baddbmm|softmax_with_lengths"
    r"|length_bias|input_signature|experimental_relax_shapes|reduce_retracing"
)
REPLACEMENTS = re.compile(
    r"^from d2lcore\.\w+\.\w+ import .*\b(Dropout|LayerNorm\w*|LazyLayerNorm|row_softmax|short_rows|ClippedAdam"
    r"|Layer|HybridBlock|GRU|AdditiveStep|prepare_keys)\b",
    re.M,
)
MULTIHEAD = {
    "masked_softmax",
    "DotProductAttention",
    "transpose_qkv",
    "transpose_output",
    "MultiHeadAttention",
}


def _docstring_lines(tree):
    """The line numbers of every docstring in ``tree``."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _kind(node, text):
    """The class of a statement (its own lines, without a compound statement's body) whose source is ``text``."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return "other"
    if isinstance(
        node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef | ast.Pass | ast.Global
    ):
        return "other"
    if isinstance(node, ast.Raise | ast.Assert):
        return "check"
    if (
        isinstance(node, ast.If)
        and all(isinstance(s, ast.Raise) for s in node.body)
        and not node.orelse
    ):
        return "check"
    if re.search(r"\bsuper\(\)\.__init__\(", text):
        return "other"
    if CHECK_CALL.search(text):
        return "check"
    if MACHINERY.search(text):
        return "machinery"
    return "model"


def classify(code, keep=None):
    """{class: number of lines} of ``code`` (the lines numbered in ``keep`` only, if given). A statement's lines
    go together: a check call over three lines is three check lines. ``other``: imports, decorators, ``def`` and
    ``class`` lines, ``super().__init__()``."""
    tree = ast.parse(code)
    source = code.splitlines()
    docstrings = _docstring_lines(tree)
    kind_of = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = [
            s
            for field in ("body", "orelse", "finalbody", "handlers")
            for s in getattr(node, field, [])
        ]
        last = node.end_lineno if not body or _kind(node, "") == "check" else body[0].lineno - 1
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        text = "\n".join(source[node.lineno - 1 : last])
        kind = _kind(node, text)
        for number in range(first, last + 1):
            is_decorator = number < node.lineno
            kind_of.setdefault(number, "other" if is_decorator else kind)
    counts = {"other": 0, "check": 0, "machinery": 0, "model": 0}
    for number, line in enumerate(source, 1):
        text = line.strip()
        if not text or text.startswith("#") or number in docstrings:
            continue
        if keep is not None and number not in keep:
            continue
        counts[kind_of.get(number, "model")] += 1
    return counts


def _cell_code(cell):
    """The code of a cell's source in a page: without its option lines (``:tags:``) and IPython magics."""
    lines = [line for line in cell.splitlines() if not line.startswith((":", "%"))]
    return "\n".join(lines)


def page_cells(framework):
    """(page, code) of every cell of ``framework`` (tagged with it) that defines a class or function."""
    for page in sorted((ROOT / "chapters").rglob("*.md")):
        for cell in CELL.findall(page.read_text(encoding="utf-8")):
            tags = TAGS.search(cell)
            if not tags or framework not in [t.strip() for t in tags.group(1).split(",")]:
                continue
            code = _cell_code(cell)
            if re.search(r"^\s*(class|def) ", code, re.M):
                yield page, code


def replacement_imports(framework):
    """The page import lines, in ``framework``'s cells, of d2lcore replacements of the framework's classes."""
    found = 0
    for page in sorted((ROOT / "chapters").rglob("*.md")):
        for cell in CELL.findall(page.read_text(encoding="utf-8")):
            tags = TAGS.search(cell)
            if tags and framework in [t.strip() for t in tags.group(1).split(",")]:
                found += len(REPLACEMENTS.findall(cell))
    return found


def multihead_lines(framework):
    """Code lines of multi-head attention and what it needs, in the package (see the module's docstring)."""
    total = 0
    for name in ("attention.py", "multihead.py"):
        code = (ROOT / "d2lcore" / FRAMEWORKS[framework] / name).read_text(encoding="utf-8")
        tree = ast.parse(code)
        keep = set()
        wanted = {n.name for n in tree.body if getattr(n, "name", None) in MULTIHEAD}
        todo = [n for n in tree.body if getattr(n, "name", None) in wanted]
        defined = {n.name: n for n in tree.body if hasattr(n, "name")}
        while todo:  # the definitions and the private helpers they call
            node = todo.pop()
            keep.update(range(node.lineno, node.end_lineno + 1))
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and sub.id.startswith("_") and sub.id in defined:
                    if sub.id not in wanted:
                        wanted.add(sub.id)
                        todo.append(defined[sub.id])
        counts = classify(code, keep)
        total += sum(counts.values())
    return total


def measure():
    """The figures of every framework, as a dict."""
    result = {}
    for framework in FRAMEWORKS:
        totals = {"cells": 0, "other": 0, "check": 0, "machinery": 0, "model": 0}
        for _, code in page_cells(framework):
            totals["cells"] += 1
            for key, n in classify(code).items():
                totals[key] += n
        code_lines = totals["other"] + totals["check"] + totals["machinery"] + totals["model"]
        result[framework] = {
            **totals,
            "code_lines": code_lines,
            "model_share": round(totals["model"] / code_lines, 3) if code_lines else None,
            "multihead_lines": multihead_lines(framework),
            "replacement_imports": replacement_imports(framework),
        }
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    figures = measure()
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    columns = {
        "cells": "cells",
        "code_lines": "code lines",
        "other": "other",
        "check": "checks",
        "machinery": "machinery",
        "model": "model",
        "model_share": "model share",
        "multihead_lines": "multi-head",
        "replacement_imports": "replacements",
    }
    print(f"{'':<11}" + "".join(f"{title:>13}" for title in columns.values()))
    for framework, row in figures.items():
        print(f"{framework:<11}" + "".join(f"{row[c]!s:>13}" for c in columns))


if __name__ == "__main__":
    main()
