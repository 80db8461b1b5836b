"""Run the notebooks a reader downloads, the way a reader runs them: far from the repository, in a fresh virtual
environment that has only the built wheel, one framework and Jupyter.

For each framework, in a new temporary folder outside the clone:

1. ``python -m venv``, then ``pip install`` the framework (at the tested version) and Jupyter's kernel and
   nbclient from the package registry;
2. in the ``reader`` mode also the built wheel with the framework's extra (``d2lcore[torch]``): the reader who
   followed "Running the Notebooks". In the ``cloud`` mode d2lcore is not installed: the notebook's setup cell must
   install it, as on a fresh Colab runtime (pip finds the built wheel through ``PIP_FIND_LINKS``, since it is not
   published yet);
3. the framework's notebooks are taken from the built site's zip (``_build/html/notebooks/<framework>.zip``, the
   files the pages link) and executed top to bottom in the notebooks' own kernel (``python3``). Wherever d2lcore is
   already installed, pip is pointed at nothing (``PIP_NO_INDEX``), so a setup cell that tried to reinstall it
   would fail the run.

Nothing is fetched but packages from the registry. The results (notebooks, seconds, Python, NumPy and framework
versions) are printed and written to ``_build/standalone/<framework>-<mode>-py<version>.json``.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

from booktools.paths import BUILD, HTML, ROOT
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


JUPYTER = ["ipykernel>=6.29", "nbclient>=0.10", "nbformat>=5.10"]

# Executed by the fresh environment's Python: nbclient runs each notebook in the kernel its metadata names.
RUNNER = textwrap.dedent(
    """\
    import json
    import os
    import sys
    import time
    from pathlib import Path

    import nbformat
    from nbclient import NotebookClient

    out, (env_first, env_rest) = Path(sys.argv[1]), json.loads(sys.argv[2])
    shell = dict(os.environ)
    results = []
    for i, name in enumerate(sys.argv[3:]):
        path = Path(name)
        nb = nbformat.read(path, as_version=4)
        os.environ.clear()  # the kernel inherits this process's environment
        os.environ.update(shell, **(env_first if i == 0 else env_rest))
        client = NotebookClient(nb, timeout=1800, resources={"metadata": {"path": str(path.parent)}})
        start = time.perf_counter()
        try:
            client.execute()
            error = None
        except Exception as err:  # the failing cell and its traceback, shortened
            error = str(err)[-4000:]
        seconds = round(time.perf_counter() - start, 1)
        kernel = nb.metadata.kernelspec.name
        results.append({"notebook": name, "seconds": seconds, "kernel": kernel, "error": error})
        print(f"  {'FAILED' if error else 'ok':<6} {seconds:7.1f} s  {name}", flush=True)
        if error:
            break
    out.write_text(json.dumps(results))
    """
)

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


def notebooks_from_site(framework, folder):
    """Unpack the site's zip of ``framework``'s notebooks into ``folder``; return them in book order."""
    archive = HTML / "notebooks" / f"{framework}.zip"
    if not archive.is_file():
        raise StandaloneFailed(f"{archive} is missing: run `make html` first")
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(folder)
        names = zf.namelist()
    from booktools.paths import toc_files

    order = {name: i for i, name in enumerate(toc_files())}

    def position(name):
        docname = Path(name).relative_to(framework).with_suffix("").as_posix()
        return order.get(docname, len(order))

    return [folder / name for name in sorted(names, key=position)]


def _run(cmd, **kwargs):
    names = {RUNNER: "<the notebook runner>", VERSIONS: "<the version report>"}
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


def run_framework(framework, mode="reader", python=sys.executable, keep=False):
    """Make the fresh environment for ``framework`` and run its notebooks; return the results as a dict."""
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
        notebooks = notebooks_from_site(framework, folder)
        # pip can install nothing: a setup cell that called it where d2lcore is present would fail
        no_pip = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(root / "no-packages-here")}
        if mode == "cloud":
            # the first notebook's setup cell installs d2lcore (from the built wheel; its dependencies from the
            # registry); then at most two more notebooks show it is not installed again
            first = {"PIP_FIND_LINKS": str(whl.parent)}
            notebooks = notebooks[:3]
        else:
            first = no_pip
        print(f"== {fw.label} ({mode}): {len(notebooks)} notebooks in {folder}", flush=True)
        out, log = root / "results.json", root / "stderr.log"
        # the runner prints one line per notebook; the kernels' start-up chatter on stderr goes to a log
        with open(log, "w") as stderr:
            try:
                _run(
                    [py, "-c", RUNNER, out, json.dumps([first, no_pip]), *notebooks],
                    env=env,
                    cwd=root,
                    stderr=stderr,
                )
            except StandaloneFailed as err:
                raise StandaloneFailed(f"{err}\n{log.read_text()[-3000:]}") from None
        results = json.loads(out.read_text())
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
        if len(results) != len(notebooks):
            raise StandaloneFailed(f"only {len(results)} of {len(notebooks)} notebooks ran")
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
    return (
        f"{REGISTRY[report['framework']].label} ({report['mode']}): {len(report['notebooks'])} notebooks ran in "
        f"{total:.0f} s with Python {v['python']}, NumPy {v['numpy']}, "
        f"{DIST_NAME[report['framework']]} {v[DIST_NAME[report['framework']]]}, d2lcore {v['d2lcore']}"
    )
