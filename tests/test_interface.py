"""The three framework modules of d2lcore offer exactly the names that d2lcore.interface lists, with the same
signatures, and no signature is written down twice: d2lcore.interface lists names only, and each name is
defined once in each framework (once in all, for a framework-neutral name)."""

import ast
import functools
import importlib
import inspect
import subprocess
import sys
import types
from collections import defaultdict
from pathlib import Path

import pytest

from d2lcore import FRAMEWORKS, MODULE_OF, common
from d2lcore.common import interface_names
from d2lcore.frameworks import REGISTRY
from d2lcore.interface import NAMES, SECTIONS

ROOT = Path(__file__).resolve().parents[1]
INTERFACE = set(NAMES)

# For a layer, the interface's `forward` is the method that calling the layer runs (`call` in Keras).
FORWARD = {fw.name: fw.forward for fw in REGISTRY.values()}

# The one documented difference (d2lcore/interface.py): PyTorch's nn.LayerNorm is built for its width, so
# PyTorch's AddNorm takes num_hiddens too.
EXTRA_INIT = {("pytorch", "AddNorm"): "num_hiddens"}

# Definitions of a public name that are not the public object and restate nothing: their own code.
OWN_CODE = {
    (
        "checked",
        "d2lcore/contracts/engine.py",
    ): "the decorator of the framework-neutral taught code (AnyFramework's hooks)",
}


@functools.cache
def module(framework):
    return importlib.import_module(MODULE_OF[framework])


def public_names(mod):
    """The public names of a module, without its own submodules (re-exported modules such as plt count)."""
    names = set()
    for name, value in vars(mod).items():
        if name.startswith("_"):
            continue
        if isinstance(value, types.ModuleType) and value.__name__.startswith(mod.__name__ + "."):
            continue
        names.add(name)
    return names


def without(signature, name):
    """``signature`` without the parameter ``name``."""
    return signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name != name]
    )


def without_training(signature):
    """Keras passes ``training`` to ``call`` only if ``call`` declares it: the one allowed extra parameter."""
    params = list(signature.parameters.values())
    if params and params[-1].name == "training" and params[-1].default is None:
        params = params[:-1]
    return signature.replace(parameters=params)


def members(cls, framework):
    """The public methods and properties that d2lcore's classes in ``cls``'s MRO define, by name, the framework's
    ``forward`` under the name ``forward``: what the framework's own base classes define is not d2lcore's."""
    found = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("d2lcore."):
            continue
        for name, value in vars(klass).items():
            if name == FORWARD[framework]:
                name = "forward"
            elif name.startswith("_"):
                continue
            if isinstance(value, property | staticmethod | classmethod) or inspect.isfunction(
                value
            ):
                found[name] = value
    return found


def member_signature(value, framework, name):
    """What a member's signature is to a caller: a property has none; Keras' ``training`` is left out."""
    if isinstance(value, property):
        return "a property"
    if isinstance(value, staticmethod | classmethod):
        return f"{type(value).__name__} {inspect.signature(value.__func__)}"
    signature = inspect.signature(value)
    if framework == "tensorflow" and name == "forward":
        signature = without_training(signature)
    return str(signature)


# --- the interface lists names ---------------------------------------------------------------------------------


def test_the_interface_lists_names_only():
    """Sections of distinct names, no check helpers: the public namespace is the book's vocabulary."""
    for title, names in SECTIONS.items():
        assert isinstance(names, tuple) and names, title
        assert all(isinstance(n, str) and n.isidentifier() for n in names), title
    assert len(NAMES) == len(INTERFACE), "a name is listed twice"
    assert interface_names() == sorted(NAMES)
    helpers = {n for n in NAMES if n.startswith("check_") or n == "valid_lens_spec"}
    assert not helpers, f"check helpers are not the book's vocabulary: {sorted(helpers)}"
    assert {"show_heatmaps", "try_gpu", "set_seed", "NWKernelRegression", "checked"} <= INTERFACE


def test_importing_d2lcore_imports_no_framework():
    neutral = "d2lcore, d2lcore.interface, d2lcore.common, d2lcore.plotting, d2lcore.timer"
    neutral += ", d2lcore.contracts.engine, d2lcore.contracts"
    code = (
        f"import sys, {neutral};"
        "loaded = {'mxnet', 'torch', 'tensorflow', 'keras'} & set(sys.modules);"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the three modules offer the same names with the same signatures -----------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_exactly_the_interface_names(framework):
    mod = module(framework)
    names = public_names(mod)
    assert names - INTERFACE == set(), f"{mod.__name__} has public names the interface lacks"
    assert INTERFACE - names == set(), f"{mod.__name__} lacks names of the interface"
    assert set(mod.__all__) == INTERFACE


@pytest.mark.parametrize("name", sorted(INTERFACE - {"plt"}))
def test_same_signatures(name):
    """Each function, constructor, forward (Keras' call) and other method or property that two frameworks define
    is the same in all three."""
    objs = {fw: getattr(module(fw), name) for fw in FRAMEWORKS}
    if name.isupper():  # a constant: the same value
        assert len({repr(v) for v in objs.values()}) == 1, objs
        return
    if all(inspect.isfunction(obj) for obj in objs.values()):
        signatures = {fw: str(inspect.signature(obj)) for fw, obj in objs.items()}
        assert len(set(signatures.values())) == 1, signatures
        return
    assert all(inspect.isclass(obj) for obj in objs.values()), (
        f"{name} should be a class everywhere: {objs}"
    )
    inits = {}
    for fw, cls in objs.items():
        signature = inspect.signature(cls)
        if (fw, name) in EXTRA_INIT:
            assert EXTRA_INIT[fw, name] in signature.parameters, (
                f"{fw}'s {name}: the documented difference"
            )
            signature = without(signature, EXTRA_INIT[fw, name])
        inits[fw] = str(signature)
    assert len(set(inits.values())) == 1, f"{name}'s constructors: {inits}"
    found = {fw: members(cls, fw) for fw, cls in objs.items()}
    counts = defaultdict(int)
    for m in found.values():
        for member in m:
            counts[member] += 1
    # a member that one framework alone defines is its mechanics (Keras' build, Gluon's hybrid_forward), except
    # forward: a layer's computation is in all three or none
    shared = sorted(member for member, count in counts.items() if count >= 2 or member == "forward")
    for member in shared:
        signatures = {
            fw: member_signature(m[member], fw, member) if member in m else "missing"
            for fw, m in found.items()
        }
        assert len(set(signatures.values())) == 1, f"{name}.{member}: {signatures}"


def test_neutral_names_are_one_object():
    """A name that d2lcore.common re-exports is one object in every module, defined in a neutral module: the code
    lives once. Any other name is defined in each framework's own package."""
    backends = tuple(MODULE_OF[fw] + "." for fw in FRAMEWORKS)
    for name in sorted(INTERFACE):
        objs = {fw: getattr(module(fw), name) for fw in FRAMEWORKS}
        if hasattr(common, name):
            assert all(obj is getattr(common, name) for obj in objs.values()), name
            defined_in = getattr(getattr(common, name), "__module__", None) or ""
            assert not defined_in.startswith(backends), (
                f"{name} is neutral but defined in {defined_in}"
            )
        else:
            for fw, obj in objs.items():
                assert obj.__module__.startswith(MODULE_OF[fw] + "."), (
                    f"{fw}'s {name} comes from {obj.__module__}"
                )


# --- no signature is written twice ------------------------------------------------------------------------------


def bindings(tree):
    """The top-level def, class and assignment statements of a module (inside if/try/with too), as (name, node)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield name.id, node
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "handlers", "finalbody"):
                for child in getattr(node, field, []):
                    todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])


def parameters(node):
    """The parameter list that a def (or a class's __init__) writes down, as source text; None for the rest."""
    if isinstance(node, ast.ClassDef):
        init = next(
            (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
        )
        return None if init is None else parameters(init)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return f"({ast.unparse(node.args)})"
    return None


def definitions(extra=()):
    """{public interface name: [(file, line, parameter list or None, kind)]}: where d2lcore's code binds it at top
    level, ``kind`` "def" for a def or class statement, "=" for an assignment; ``extra``: (path relative to the
    repository, source) pairs read as if they were there."""
    sources = {
        p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
        for p in (ROOT / "d2lcore").rglob("*.py")
    }
    sources.update(extra)
    found = defaultdict(list)
    for path, text in sorted(sources.items()):
        for name, node in bindings(ast.parse(text)):
            if name in INTERFACE:
                kind = (
                    "def"
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    else "="
                )
                found[name].append((path, node.lineno, parameters(node), kind))
    return found


def source_file(obj):
    return Path(inspect.getsourcefile(inspect.unwrap(obj))).resolve().relative_to(ROOT).as_posix()


def assigns(path, name):
    """Whether the module at ``path`` (relative to the repository) holds the constant ``name`` of the interface."""
    value = getattr(module(FRAMEWORKS[0]), name)
    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    try:
        return getattr(importlib.import_module(dotted), name, None) is value
    except ImportError:
        return False


def restatements(found):
    """The definitions of public names beyond their own. A function or class is written by a def or class statement
    once in each framework's file it comes from (once in all, for a neutral one); an assignment of its name is no
    definition (d2lcore.contracts names each contract like what it guards). A constant is assigned once; a module
    (plt) is imported, never assigned."""
    problems = []
    for name in sorted(INTERFACE):
        obj = getattr(module(FRAMEWORKS[0]), name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            entries = [e for e in found[name] if e[3] == "def"]
            expected = sorted({source_file(getattr(module(fw), name)) for fw in FRAMEWORKS})
        else:
            entries = [e for e in found[name] if e[3] == "="]
            expected = (
                []
                if isinstance(obj, types.ModuleType)
                else [p for p in {e[0] for e in entries} if assigns(p, name)]
            )
        paths = [path for path, *_ in entries]
        for path, line, params, _ in entries:
            if (path in expected and paths.count(path) == 1) or (name, path) in OWN_CODE:
                continue
            what = f"{name}{params}" if params else name
            problems.append(
                f"{path}:{line} writes {what} again (its definitions: {', '.join(expected) or 'none'})"
            )
        problems += [f"{name} is not defined in {path}" for path in expected if path not in paths]
    return problems


def test_no_signature_is_restated():
    """0 signatures restated outside their definition: no stub, no copy of a parameter list under its name."""
    problems = restatements(definitions())
    assert not problems, "\n".join(problems)


def test_the_rule_catches_a_stub():
    """What d2lcore/interface.py used to be: stubs that restate the implementations' signatures."""
    stubs = '''
def set_seed(seed):
    """Seed Python's, NumPy's and the framework's random number generators."""

class AddNorm:
    def __init__(self, dropout): ...
    def forward(self, X, Y): ...

LAYER_NORM_EPS = 1e-5
plt = "matplotlib.pyplot"
'''
    problems = restatements(definitions(extra={"d2lcore/interface.py": stubs}))
    problems = [p for p in problems if p.startswith("d2lcore/interface.py:")]
    assert [p.split(" writes ")[1].split(" again")[0] for p in problems] == [
        "AddNorm(self, dropout)",
        "LAYER_NORM_EPS",
        "plt",
        "set_seed(seed)",
    ], problems
