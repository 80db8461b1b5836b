"""Run the notebooks a reader downloads, the way a reader runs them: far from the repository, in a fresh virtual
environment that has only the built wheel, one framework and Jupyter; and check their checked cells there.

For each framework, in a new temporary folder outside the clone:

1. ``python -m venv``, then ``pip install`` the framework (at the tested version), Jupyter's kernel and nbval from
   the package registry (NumPy comes at the newest version the framework allows: 2.x for PyTorch and
   TensorFlow, 1.26 for MXNet);
2. in the ``reader`` mode also the built wheel with the framework's extra (``d2lcore[torch]``): the reader who
   followed "Running the Notebooks". In the ``cloud`` mode d2lcore is not installed: the notebook's setup cell must
   install it, as on a fresh Colab runtime, from where the site's notebooks say it is published: until the release
   on PyPI, the wheel on the site itself, which this check serves on 127.0.0.1 (the site's address in the setup
   cell is replaced by the local server's; the path on the site is kept);
3. the framework's notebooks are taken from the built site's zip, with the outputs the book records for their
   checked cells (booktools/checked.py), and each is run by ``pytest --nbval-lax --nbval-current-env`` in the
   fresh environment: every cell must run, and every checked cell must print what the book recorded. Wherever
   d2lcore is already installed, pip is pointed at nothing (``PIP_NO_INDEX``), so a setup cell that tried to
   reinstall it would fail the run.

Nothing is fetched but packages from the registry. The results (notebooks, seconds, checked cells, Python, NumPy
and framework versions) are printed and written to ``_build/standalone/<framework>-<mode>-py<version>.json``.
"""

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from booktools.checked import NotCheckable, write_checked
from booktools.paths import BUILD, HTML, ROOT
from booktools.split import WHEEL
from d2lcore import __version__
from d2lcore.frameworks import REGISTRY

DIST = BUILD / "dist"
RESULTS = BUILD / "standalone"


def tested_pin(framework):
    """``name==version`` of the framework's release the book is tested with: the version pinned in
    requirements.txt (whose TensorFlow is the ``-cpu`` build), under the name the d2lcore extra installs."""
    name = REGISTRY[framework].extra
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        package, _, version = line.split("#")[0].strip().partition("==")
        if package in (name, f"{name}-cpu") and version:
            return f"{name}=={version}"
    raise StandaloneFailed(
        f"requirements.txt pins no {name}==<version>: add the tested version there"
    )


# Jupyter's kernel and the check, at the versions requirements.txt allows
JUPYTER = ["ipykernel>=6.29", "nbval>=0.11,<0.12", "pytest>=8,<10"]
NBVAL = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env"]

# Executed by the fresh environment's Python: the versions it ran with (argv: distribution names).
VERSIONS = textwrap.dedent(
    """\
    import importlib.metadata
    import json
    import platform
    import sys

    def version(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    print(json.dumps({"python": platform.python_version(), **{n: version(n) for n in sys.argv[1:]}}))
    """
)
DIST_NAME = {"mxnet": "mxnet", "pytorch": "torch", "tensorflow": "tensorflow"}


class StandaloneFailed(RuntimeError):
    """A notebook failed in the fresh environment, or the environment could not be made."""


def wheel():
    """The built wheel of this version (``make dist`` builds it)."""
    path = DIST / f"d2lcore-{__version__}-py3-none-any.whl"
    if not path.is_file():
        raise StandaloneFailed(f"{path} is missing: run `make dist` first")
    return path


def _run(cmd, **kwargs):
    names = {VERSIONS: "<the version report>"}
    shown = [names.get(c, str(c)) for c in cmd]
    print("$", " ".join(shown), flush=True)
    result = subprocess.run([str(c) for c in cmd], **kwargs)
    if result.returncode != 0:
        raise StandaloneFailed(
            f"command failed (exit {result.returncode}): {' '.join(map(str, cmd))}"
        )
    return result


def clean_env(**extra):
    """The environment of a reader's shell: nothing that points back into the repository. pip's own
    settings are kept (a CI may point pip at PyTorch's CPU index)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "D2L_DATA_DIR", "VIRTUAL_ENV", "JUPYTER_PATH", "PYTHONHOME")
    }
    env.update(extra)
    return env


@contextlib.contextmanager
def serve_site(html=HTML):
    """Serve the built site on 127.0.0.1 (a free port) while the block runs; yield its address, ending in "/"."""
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


SITE_WHEEL = re.compile(r"@ (\S+?/)(notebooks/" + re.escape(WHEEL) + r")\b")


def install_from(notebook, local_site):
    """Point the setup cell of ``notebook`` (a file) at ``local_site`` instead of the published site, keeping the
    wheel's path on the site; return the URL it installs from now, or None where it names PyPI."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    setup = nb.cells[0]
    match = SITE_WHEEL.search(setup.source)
    if match is None:
        return None
    setup.source = SITE_WHEEL.sub(lambda m: f"@ {local_site}{m.group(2)}", setup.source)
    nbformat.write(nb, notebook)
    return local_site + match.group(2)


def _junit_counts(path):
    """(cells run, cells failed) from pytest's JUnit XML report."""
    suite = ET.parse(path).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return int(suite.get("tests", 0)), failed


def run_notebooks(py, checked, env_first, env_rest, cwd):
    """Run each checked notebook with nbval in the environment of ``py``, one pytest per notebook (the first with
    ``env_first`` added to the environment, the rest with ``env_rest``); stop at the first failure. Return one
    result per notebook run."""
    results = []
    for i, (path, n_checked) in enumerate(checked):
        env = {**clean_env(), **(env_first if i == 0 else env_rest)}
        junit = cwd / f"junit-{i}.xml"
        command = [py, *NBVAL, "--nbval-cell-timeout=1800", f"--junitxml={junit}", path]
        start = time.perf_counter()
        done = subprocess.run(
            [str(c) for c in command], env=env, cwd=cwd, capture_output=True, text=True
        )
        seconds = round(time.perf_counter() - start, 1)
        cells, failed = _junit_counts(junit) if junit.exists() else (0, 0)
        error = None
        if done.returncode != 0:
            error = (done.stdout + done.stderr)[-4000:]
        results.append(
            {
                "notebook": str(path),
                "seconds": seconds,
                "cells": cells,
                "failed": failed,
                "checked": n_checked,
                "error": error,
            }
        )
        state = "FAILED" if error else "ok"
        print(
            f"  {state:<6} {seconds:7.1f} s  {cells:3d} cells, {n_checked:2d} checked  {path.name}",
            flush=True,
        )
        if error:
            break
    return results


def run_framework(framework, mode="reader", python=sys.executable, keep=False):
    """Make the fresh environment for ``framework`` and run its notebooks under nbval; return the results as a
    dict."""
    fw = REGISTRY[framework]
    whl = wheel()
    root = Path(tempfile.mkdtemp(prefix=f"d2l-standalone-{framework}-"))
    if root.resolve().is_relative_to(ROOT):
        raise StandaloneFailed(f"{root} lies inside the repository; set TMPDIR elsewhere")
    env = clean_env(JUPYTER_DATA_DIR=str(root / "jupyter-data"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    try:
        venv = root / "venv"
        _run([python, "-m", "venv", venv], env=env)
        py = venv / "bin" / "python"
        packages = [tested_pin(framework), *JUPYTER]
        if mode == "reader":
            packages.insert(0, f"{whl}[{fw.extra}]")
        _run([py, "-m", "pip", "install", "-q", *packages], env=env)
        folder = root / "notebooks"
        try:
            checked = write_checked(framework, folder)
        except NotCheckable as err:
            raise StandaloneFailed(str(err)) from None
        kernel = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "JUPYTER_DATA_DIR": env["JUPYTER_DATA_DIR"]}
        # pip can install nothing: a setup cell that called it where d2lcore is present would fail
        no_pip = {**kernel, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(root / "no-packages-here")}
        site = contextlib.nullcontext(None)
        first = no_pip
        if mode == "cloud":
            # the first notebook's setup cell installs d2lcore from where the site says (its dependencies from
            # the registry); then at most two more notebooks show it is not installed again
            checked, first, site = checked[:3], kernel, serve_site()
        print(f"== {fw.label} ({mode}): {len(checked)} notebooks in {folder}", flush=True)
        with site as local_site:
            source = install_from(checked[0][0], local_site) if local_site else None
            if local_site:
                print(f"   the setup cell installs d2lcore from {source or 'PyPI'}", flush=True)
            results = run_notebooks(py, checked, first, no_pip, root)
        versions = json.loads(
            _run(
                [py, "-c", VERSIONS, "numpy", "d2lcore", DIST_NAME[framework]],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            ).stdout
        )
        for r in results:
            r["notebook"] = Path(r["notebook"]).relative_to(folder).as_posix()
        report = {
            "framework": framework,
            "mode": mode,
            "wheel": whl.name,
            "installed_from": source if mode == "cloud" else str(whl),
            "folder": str(root),
            "versions": versions,
            "notebooks": results,
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        name = f"{framework}-{mode}-py{versions['python']}.json"
        (RESULTS / name).write_text(json.dumps(report, indent=1) + "\n")
        failed = [r for r in results if r["error"]]
        if failed:
            raise StandaloneFailed(
                f"{failed[0]['notebook']} failed in the fresh {fw.label} environment ({mode}):\n"
                f"{failed[0]['error']}"
            )
        if len(results) != len(checked):
            raise StandaloneFailed(f"only {len(results)} of {len(checked)} notebooks ran")
        if versions["d2lcore"] != __version__:
            raise StandaloneFailed(
                f"the environment has d2lcore {versions['d2lcore']}, not {__version__}"
            )
        return report
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def summary(report):
    v = report["versions"]
    total = sum(r["seconds"] for r in report["notebooks"])
    checked = sum(r["checked"] for r in report["notebooks"])
    return (
        f"{REGISTRY[report['framework']].label} ({report['mode']}): {len(report['notebooks'])} notebooks ran in "
        f"{total:.0f} s, {checked} checked cells as recorded, with Python {v['python']}, NumPy {v['numpy']}, "
        f"{DIST_NAME[report['framework']]} {v[DIST_NAME[report['framework']]]}, d2lcore {v['d2lcore']}"
    )
