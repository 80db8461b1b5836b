"""Who may import whom, read from the source's import statements (no module is run):

- ``d2lcore`` never imports ``booktools``;
- a framework backend (``d2lcore/<framework>/``) never imports another backend;
- the neutral modules (``d2lcore/*.py``) import no framework and no backend;
- ``booktools`` imports no backend and no framework.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from d2lcore.frameworks import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = {
    fw.module for fw in REGISTRY.values()
}  # d2lcore.mxnet, d2lcore.torch, d2lcore.tensorflow
FRAMEWORK_PACKAGES = {"mxnet", "torch", "tensorflow", "keras"}


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path, text=None):
    """The absolute names of the modules that the file at ``path`` (with the source ``text``, read from the file
    if None) imports, relative imports resolved."""
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8") if text is None else text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def within(name, packages):
    return any(name == p or name.startswith(p + ".") for p in packages)


def files(folder):
    return sorted((ROOT / folder).rglob("*.py"))


def backend_of(path):
    name = module_name(path)
    return next((b for b in BACKENDS if within(name, {b})), None)


def test_the_rules_see_the_files():
    assert len(files("d2lcore")) > 30 and len(files("booktools")) > 8
    assert {backend_of(p) for p in files("d2lcore")} == BACKENDS | {None}


@pytest.mark.parametrize("path", files("d2lcore"), ids=lambda p: module_name(p))
def test_d2lcore_never_imports_booktools(path):
    assert not {n for n in imports(path) if within(n, {"booktools"})}


@pytest.mark.parametrize("path", files("d2lcore"), ids=lambda p: module_name(p))
def test_a_backend_imports_no_other_backend(path):
    own = backend_of(path)
    others = BACKENDS - {own}
    assert not {n for n in imports(path) if within(n, others)}, (
        f"{module_name(path)} imports another backend"
    )


@pytest.mark.parametrize(
    "path", [p for p in files("d2lcore") if backend_of(p) is None], ids=lambda p: module_name(p)
)
def test_neutral_modules_import_no_framework(path):
    bad = {n for n in imports(path) if within(n, FRAMEWORK_PACKAGES | BACKENDS)}
    assert not bad, f"{module_name(path)} is neutral but imports {sorted(bad)}"


@pytest.mark.parametrize("path", files("booktools"), ids=lambda p: module_name(p))
def test_booktools_imports_no_backend(path):
    bad = {n for n in imports(path) if within(n, FRAMEWORK_PACKAGES | BACKENDS)}
    assert not bad, f"{module_name(path)} imports {sorted(bad)}"


def test_the_rules_catch_a_violation():
    """The parser is not vacuous: relative and absolute imports of another backend or a framework are found."""
    fake = ROOT / "d2lcore" / "torch" / "x.py"
    found = imports(fake, "from ..mxnet import np\nimport keras\nfrom . import weights\n")
    assert within("d2lcore.mxnet", found - {"d2lcore.mxnet.np"}) and "keras" in found
    assert "d2lcore.torch.weights" in found
    assert {n for n in found if within(n, BACKENDS - {backend_of(fake)})} == {
        "d2lcore.mxnet",
        "d2lcore.mxnet.np",
    }


# No surprises on import: what importing a framework's d2lcore module may change in the process.
PROBE = """
import importlib, json, os, sys
import matplotlib
if sys.argv[2]:  # the framework first: what it sets itself is its own business
    importlib.import_module(sys.argv[2])
before_env, before_rc = dict(os.environ), dict(matplotlib.rcParams)
importlib.import_module(sys.argv[1])
import d2lcore.plotting
env = {k: v for k, v in os.environ.items() if before_env.get(k) != v}
rc = sorted(k for k, v in matplotlib.rcParams.items() if before_rc.get(k) != v)
print(json.dumps({"env": env, "rc": rc}))
"""
# What d2lcore may set: the thread choice (chapters/running-locally.md). MXNet cannot be imported before
# d2lcore.mxnet (its NumPy shim), so there MXNet's own variables count too.
DOCUMENTED = {"d2lcore.mxnet": {"OMP_NUM_THREADS"}}


@pytest.mark.parametrize(
    "module, framework",
    [("d2lcore.mxnet", ""), ("d2lcore.torch", "torch"), ("d2lcore.tensorflow", "tensorflow")],
)
def test_importing_changes_no_environment_variable_or_matplotlib_setting(module, framework):
    """Beyond the documented thread choice: no THP_MEM_ALLOC_ENABLE, no TensorFlow log level, no rcParams."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TF_", "THP_", "OMP_", "MKL_", "D2L_", "MATPLOTLIB"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, framework], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    changed = json.loads(done.stdout.splitlines()[-1])
    assert set(changed["env"]) <= DOCUMENTED.get(module, set()), changed["env"]
    assert changed["rc"] == [], changed["rc"]


def test_the_book_kernels_fix_the_svg_salt_and_nothing_else_of_matplotlib():
    from booktools.kernels import MATPLOTLIBRC, kernel_env

    assert kernel_env("pytorch")["MATPLOTLIBRC"] == str(MATPLOTLIBRC)
    settings = [
        line.split(":")[0].strip()
        for line in MATPLOTLIBRC.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert settings == ["svg.hashsalt"]
