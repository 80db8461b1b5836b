"""``make nbval``: every notebook executed once, the way a reader runs it, far from the repository, in a fresh
virtual environment per framework; its checked cells compared with the recorded outputs, and the executed
notebook kept for the book's build, which executes nothing again.

For each framework, in a new temporary folder outside the clone:

1. ``python -m venv``, then ``pip install`` the framework (at the tested version, requirements.txt), Jupyter's
   kernel, nbclient and nbval from the package registry: a cloud runtime such as Colab, without d2lcore. NumPy
   comes at the newest version the framework allows: 2.x for PyTorch and TensorFlow, 1.26 for MXNet.
2. The notebooks are the framework's notebooks as the site offers them (booktools.split, with the setup cell the
   site publishes: ``d2l_install_from`` in _config.yml), each checked cell holding the outputs the book records
   (booktools/validate.py's ``prepare``). The setup cells name the site's wheel, served here on 127.0.0.1 from a
   folder laid out as the site (``notebooks/<wheel>``, the wheel that ``make dist`` built and the site offers).
3. The first notebook (in book order) runs alone: its setup cell must install d2lcore from the site, as on a fresh
   cloud runtime (its dependencies from the registry). From then on the environment is the reader's of "Running
   the Notebooks" (the wheel installed with the framework's extra), and pip is pointed at nothing
   (``PIP_NO_INDEX``), so a setup cell that tried to install d2lcore again would fail.
4. The others run ``jobs`` at a time over all the frameworks (two on two cores), longest first, each by ``pytest
   --nbval-lax --nbval-current-env`` in the fresh environment's Python, in the environment of the book's kernel
   (booktools/kernels.py) and on an imitated other CPU (booktools/cpus.py; ``--cpu native`` for this one). Every
   cell must run, and every checked cell must print what the book records. nbval's run is the only execution:
   booktools/nbval_plugin.py (copied next to the notebooks: it imports nothing from the book) writes each
   executed notebook, and booktools.validate's ``keep`` puts it where the build reads it.

Nothing is fetched but packages from the registry. The results (notebooks, seconds, checked cells, Python, NumPy
and framework versions) are printed and written to ``_build/standalone/<framework>.json``.
"""

import contextlib
import functools
import heapq
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
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import nbformat
import yaml

from booktools import nbval_plugin
from booktools.cpus import CPUS
from booktools.execute import default_jobs, environment_hash, recorded_durations
from booktools.expected import is_checked
from booktools.kernels import MATPLOTLIBRC, kernel_env
from booktools.paths import BUILD, ROOT, rel
from booktools.split import WHEEL, setup_source
from booktools.validate import executed_path, prepare, summarise
from booktools.validate import keep as keep_executed
from d2lcore import __version__
from d2lcore.frameworks import REGISTRY

DIST = BUILD / "dist"
RESULTS = BUILD / "standalone"
PLUGIN = "d2l_nbval_record"  # booktools/nbval_plugin.py's name in the fresh environment's folder


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


# Jupyter's kernel, nbclient (how the plugin turns the kernel's messages into outputs) and the check, at the
# versions requirements.txt allows
JUPYTER = ["ipykernel>=6.29", "nbclient>=0.10", "nbval>=0.11,<0.12", "pytest>=8,<10"]
NBVAL = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN]
# a kernel's start (its framework's first import) can take minutes on a busy machine: nbval's default is 60 s
NBVAL += ["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=1800"]
NBVAL += ["--nbval-kernel-startup-timeout=600"]

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
    path = DIST / WHEEL
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
def serve_site(html):
    """Serve the folder ``html`` on 127.0.0.1 (a free port) while the block runs; yield its address, ending in
    "/"."""
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


def installs_from_site():
    """Whether the site's notebooks install d2lcore from the site (``d2l_install_from: site`` in _config.yml)
    rather than from PyPI."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config.get("sphinx", {}).get("config", {}).get("d2l_install_from", "site") == "site"


def _suite(path):
    suite = ET.parse(path).getroot()
    return suite if suite.tag == "testsuite" else suite.find("testsuite")


def _junit_counts(path):
    """(cells run, cells failed) from pytest's JUnit XML report."""
    suite = _suite(path)
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return int(suite.get("tests", 0)), failed


def kernel_not_started(path):
    """The reason, where pytest's JUnit XML report says that every cell failed in nbval's setup (the kernel's
    start, before any cell ran); otherwise None. A kernel can die as it starts for a reason outside the notebook
    (likely, though not proven: two kernels started at once in parallel runs handed the same free port)."""
    cases = _suite(path).findall("testcase")
    errors = [case.find("error") for case in cases]
    messages = [error.get("message", "") if error is not None else "" for error in errors]
    if cases and all(message.startswith("failed on setup") for message in messages):
        return messages[0]
    return None


def failure_report(output, tail=3000):
    """What a failed nbval run printed, shortest first: pytest's summary and exception lines (``E ...``), then
    the last ``tail`` characters, so that a CI log's excerpt shows the cause (without terminal colours)."""
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = output.splitlines()
    summary = [line for line in lines if line.startswith(("FAILED ", "ERROR ", "E  "))]
    head = "\n".join(dict.fromkeys(summary))[:3000]
    return f"{head}\n[…]\n{output[-tail:]}" if head else output[-2 * tail :]


class Environment:
    """One framework's fresh environment in a temporary folder outside the clone, and its notebooks."""

    def __init__(self, framework, sources, cpu, python, env_hash):
        self.framework, self.sources, self.cpu = framework, sources, cpu
        self.root = Path(tempfile.mkdtemp(prefix=f"d2l-nbval-{framework}-"))
        if self.root.resolve().is_relative_to(ROOT):
            raise StandaloneFailed(f"{self.root} lies inside the repository; set TMPDIR elsewhere")
        self.python, self.env_hash = python, env_hash
        self.py = self.root / "venv" / "bin" / "python"
        self.results, self.notebooks, self.versions = [], [], {}
        self.base = clean_env(
            JUPYTER_DATA_DIR=str(self.root / "jupyter-data"), PIP_DISABLE_PIP_VERSION_CHECK="1"
        )

    def create(self, local_site):
        """Make the environment and the notebooks."""
        _run([self.python, "-m", "venv", self.root / "venv"], env=self.base)
        packages = [tested_pin(self.framework), *JUPYTER]
        _run([self.py, "-m", "pip", "install", "-q", *packages], env=self.base)
        self.write_notebooks(local_site)

    def write_notebooks(self, local_site):
        """nbval's notebooks, with the plugin and the book's matplotlib settings beside them; their setup cells
        name the wheel on ``local_site`` as the site's name the wheel on the site (or PyPI, as the site's do)."""
        shutil.copyfile(nbval_plugin.__file__, self.root / f"{PLUGIN}.py")
        shutil.copyfile(MATPLOTLIBRC, self.root / "matplotlibrc")
        url = f"{local_site}notebooks/{WHEEL}" if installs_from_site() else None
        for source in self.sources:
            path, _, problems = prepare(
                source, self.framework, self.env_hash, self.root / "notebooks", kernel=False
            )
            nb = nbformat.read(path, as_version=4)
            nb.cells[0].source = setup_source(self.framework, url)  # as the site publishes it
            nbformat.write(nb, path)
            checked = sum(1 for cell in nb.cells if is_checked(cell))
            self.notebooks.append((source, path, checked, problems))

    def env(self, first):
        """The environment of a notebook's run: the book kernel's, the CPU's settings; after the first, no pip."""
        env = {
            **self.base,
            **kernel_env(self.framework),
            "MATPLOTLIBRC": str(self.root / "matplotlibrc"),
            **CPUS[self.cpu],
            "D2L_CPU": self.cpu,
        }
        if (
            not first
        ):  # pip can install nothing: a setup cell that called it where d2lcore is present fails
            env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(self.root / "no-packages-here"))
        return env

    def run(self, index):
        """Execute and check notebook ``index`` with nbval; keep it for the build; return its result."""
        source, path, checked, problems = self.notebooks[index]
        junit = self.root / f"junit-{index}.xml"
        command = [self.py, *NBVAL, f"--junitxml={junit}", path]
        for attempt in (1, 2):
            start = time.perf_counter()
            done = subprocess.run(
                [str(c) for c in command],
                env=self.env(first=index == 0),
                cwd=self.root,
                capture_output=True,
                text=True,
            )
            seconds = round(time.perf_counter() - start, 1)
            reason = kernel_not_started(junit) if done.returncode and junit.exists() else None
            if reason is None or attempt == 2:
                break
            # no cell ran: the notebook is not at fault, so it gets one more kernel (and the log says so)
            print(
                f"  kernel of {rel(source).name} ({self.framework}) did not start, {reason}; once more"
            )
        cells, failed = _junit_counts(junit) if junit.exists() else (0, 0)
        kept = keep(path, source, self.framework)
        error = failure_report(done.stdout + done.stderr) if done.returncode != 0 else None
        if error is None and kept is None:
            error = "the executed notebook was not written"
        result = {
            "notebook": rel(source).as_posix(),
            "seconds": seconds,
            "cells": cells,
            "failed": failed,
            "checked": checked,
            "kept": kept,
            "problems": problems,
            "error": error,
        }
        self.results.append(result)
        state = "FAILED" if error or problems else "ok"
        print(
            f"  {state:<6} {self.framework:<10} {seconds:7.1f} s  {cells:3d} cells, {checked:2d} checked  "
            f"{rel(source).name}",
            flush=True,
        )
        if error:
            print(error, flush=True)
        return result

    def report(self, installed_from):
        """Write and return the framework's report; raise StandaloneFailed where d2lcore is not this version."""
        self.versions = json.loads(
            _run(
                [self.py, "-c", VERSIONS, "numpy", "d2lcore", DIST_NAME[self.framework]],
                env=self.base,
                stdout=subprocess.PIPE,
                text=True,
            ).stdout
        )
        report = {
            "framework": self.framework,
            "cpu": self.cpu,
            "wheel": WHEEL,
            "installed_from": installed_from,
            "folder": str(self.root),
            "versions": self.versions,
            "notebooks": sorted(self.results, key=lambda r: r["notebook"]),
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{self.framework}.json").write_text(json.dumps(report, indent=1) + "\n")
        if self.versions["d2lcore"] != __version__:
            raise StandaloneFailed(
                f"the {self.framework} environment has d2lcore {self.versions['d2lcore']}, not {__version__}"
            )
        return report


def keep(path, source, framework):
    """booktools.validate's ``keep``, with the setup cell as the build's own notebooks have it (it names no site
    and shows no installation: the site's copy gets its address from the build, booktools.sphinx_ext)."""
    executed = executed_path(path)
    if executed.exists():
        nb = nbformat.read(executed, as_version=4)
        nb.cells[0].source, nb.cells[0].outputs = setup_source(framework), []
        nbformat.write(nb, executed)
    return keep_executed(path, source, framework)


def run_all(
    sources, frameworks, cpu="restricted", jobs=None, python=sys.executable, keep_folders=False
):
    """Execute and check every (source, framework) notebook in the frameworks' fresh environments (see the
    module's docstring); print a summary; return the reports. Raises StandaloneFailed when anything failed."""
    if cpu not in CPUS:
        raise ValueError(f"cpu must be one of {sorted(CPUS)}; got {cpu!r}")
    whl = wheel()
    env_hash = environment_hash()
    jobs = default_jobs() if jobs is None else jobs
    durations = recorded_durations()
    settings = " ".join(f"{k}={v!r}" for k, v in CPUS[cpu].items()) or "none"
    print(f"== nbval in fresh environments, on the {cpu} CPU (settings: {settings})", flush=True)
    site = Path(tempfile.mkdtemp(prefix="d2l-site-"))
    (site / "notebooks").mkdir()
    shutil.copyfile(whl, site / "notebooks" / WHEEL)
    envs = [Environment(fw, sources, cpu, python, env_hash) for fw in frameworks]
    # the longest notebooks first (booktools/durations.json), over every framework, once its environment exists
    ready, counter = [], 0

    def seconds(env, index):
        source = env.sources[index]
        return durations.get(rel(source).as_posix(), {}).get(env.framework, 1e9)

    def first(env, local_site):
        env.create(local_site)
        print(f"== {REGISTRY[env.framework].label}: {len(env.notebooks)} notebooks in {env.root}")
        print(f"   the first one's setup cell installs d2lcore from {local_site}", flush=True)
        return env.run(0)

    start = time.perf_counter()
    try:
        with serve_site(site) as local_site, ThreadPoolExecutor(jobs) as pool:
            # the environments with the longest notebooks are made first
            order = sorted(envs, key=lambda e: -sum(seconds(e, i) for i in range(len(sources))))
            pending = {pool.submit(first, env, local_site): env for env in order[:jobs]}
            waiting = order[jobs:]
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    env = pending.pop(future)
                    result = future.result()
                    if (
                        isinstance(result, dict)
                        and result["notebook"] == rel(env.sources[0]).as_posix()
                    ):
                        if result["error"] is None:  # its environment is ready: its other notebooks
                            for index in range(1, len(env.notebooks)):
                                counter += 1
                                heapq.heappush(ready, (-seconds(env, index), counter, env, index))
                while len(pending) < jobs and (ready or waiting):
                    # an environment still to make goes before a notebook shorter than a minute
                    if waiting and (not ready or -ready[0][0] < 60):
                        env = waiting.pop(0)
                        pending[pool.submit(first, env, local_site)] = env
                    else:
                        _, _, env, index = heapq.heappop(ready)
                        pending[pool.submit(env.run, index)] = env
            reports = [env.report(local_site + f"notebooks/{WHEEL}") for env in envs]
    finally:
        shutil.rmtree(site, ignore_errors=True)
        if not keep_folders:
            for env in envs:
                shutil.rmtree(env.root, ignore_errors=True)
    wall = time.perf_counter() - start
    results = [
        (ROOT / r["notebook"], report["framework"], r["kept"], r["problems"])
        for report in reports
        for r in report["notebooks"]
    ]
    expected = len(sources) * len(frameworks)
    status = summarise(results)
    for report in reports:
        print(summary(report), flush=True)
    print(f"== {len(results)} of {expected} notebooks executed once, in {wall:.0f} s", flush=True)
    if (
        status
        or len(results) != expected
        or any(r["error"] for rep in reports for r in rep["notebooks"])
    ):
        raise StandaloneFailed("some notebooks failed or did not run (see above)")
    return reports


def summary(report):
    v = report["versions"]
    total = sum(r["seconds"] for r in report["notebooks"])
    checked = sum(r["checked"] for r in report["notebooks"])
    return (
        f"{REGISTRY[report['framework']].label}: {len(report['notebooks'])} notebooks ran in {total:.0f} s, "
        f"{checked} checked cells as recorded, with Python {v['python']}, NumPy {v['numpy']}, "
        f"{DIST_NAME[report['framework']]} {v[DIST_NAME[report['framework']]]}, d2lcore {v['d2lcore']}"
    )
