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


# No surprises on import: what importing a framework's d2lcore module changes in the process, measured, against the
# one list in the docs (chapters/running-locally.md, "What importing d2lcore changes").
PROBE = """
import importlib, json, os, sys
import matplotlib, numpy
if sys.argv[2]:  # the framework first: what it sets itself is its own business
    importlib.import_module(sys.argv[2])
before_env, before_rc, had_bool = dict(os.environ), dict(matplotlib.rcParams), "bool" in vars(numpy)
threads = lambda: None
if sys.argv[2] == "torch":
    import torch
    torch.set_num_threads(2)
    threads = torch.get_num_threads
elif sys.argv[2] == "tensorflow":
    import tensorflow as tf
    threads = lambda: (tf.config.threading.get_intra_op_parallelism_threads(),
                       tf.config.threading.get_inter_op_parallelism_threads())
before_threads = threads()
importlib.import_module(sys.argv[1])
import d2lcore.plotting
effects = sorted(k for k, v in os.environ.items() if before_env.get(k) != v)
effects += sorted(f"rcParams[{k}]" for k, v in matplotlib.rcParams.items() if before_rc.get(k) != v)
if "bool" in vars(numpy) and not had_bool:
    effects.append("numpy.bool = bool")
if threads() != before_threads:
    effects.append({"torch": "torch.set_num_threads", "tensorflow": "tf.config.threading"}[sys.argv[2]])
if sys.argv[1] == "d2lcore.mxnet":
    from mxnet import npx
    effects.append("npx.set_np()" if npx.is_np_array() else "")
print(json.dumps(effects))
"""
EFFECTS = {
    "d2lcore.torch": ["torch.set_num_threads"],
    "d2lcore.tensorflow": ["tf.config.threading"],
    "d2lcore.mxnet": [
        "MXNET_USE_MKLDNN_RNN",
        "OMP_NUM_THREADS",
        "numpy.bool = bool",
        "npx.set_np()",
    ],
}
"""Every process-wide effect of importing d2lcore, with nothing chosen by the reader (MXNet cannot be imported
before d2lcore.mxnet, its NumPy shim, so its own settings count there)."""


def probe(module, framework, **env):
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TF_", "THP_", "OMP_", "MKL_", "D2L_", "MATPLOTLIB", "MXNET_"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, framework],
        env={**clean, **env},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "module, framework",
    [("d2lcore.mxnet", ""), ("d2lcore.torch", "torch"), ("d2lcore.tensorflow", "tensorflow")],
)
def test_importing_has_exactly_the_documented_effects(module, framework):
    """No THP_MEM_ALLOC_ENABLE, no TensorFlow log level, no rcParams: only the list of the docs."""
    assert probe(module, framework) == EFFECTS[module]


def test_the_docs_list_every_effect():
    text = (ROOT / "chapters" / "running-locally.md").read_text(encoding="utf-8")
    section = text[
        text.index("**What importing `d2lcore` changes.**") : text.index("- **Reproducible.**")
    ]
    for effects in EFFECTS.values():
        for effect in effects:
            assert effect.split(" =")[0] in section, effect


def test_a_value_the_reader_set_is_never_overwritten():
    """Even with D2L_NUM_THREADS set, the reader's own OMP_NUM_THREADS and MXNET_USE_MKLDNN_RNN stay."""
    effects = probe(
        "d2lcore.mxnet", "", OMP_NUM_THREADS="3", MXNET_USE_MKLDNN_RNN="1", D2L_NUM_THREADS="2"
    )
    assert "OMP_NUM_THREADS" not in effects and "MXNET_USE_MKLDNN_RNN" not in effects
    assert (
        probe("d2lcore.torch", "torch", OMP_NUM_THREADS="3") == []
    )  # the reader chose: threads left alone


def test_the_book_kernels_fix_the_svg_salt_and_nothing_else_of_matplotlib():
    from booktools.kernels import MATPLOTLIBRC, kernel_env

    assert kernel_env("pytorch")["MATPLOTLIBRC"] == str(MATPLOTLIBRC)
    settings = [
        line.split(":")[0].strip()
        for line in MATPLOTLIBRC.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert settings == ["svg.hashsalt"]
