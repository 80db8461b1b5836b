"""``make nbval``: execute each notebook once, under nbval, against the recorded expected outputs.

For every selected (source, framework), the split notebook gets the expected outputs of its checked cells
(booktools/expected.py) and the framework's kernel, and is written to ``_build/nbval/<framework>/...``. Then
``pytest --nbval-lax`` executes these notebooks, comparing the checked cells, and ``booktools.nbval_plugin``
writes each executed notebook, with its cache key, to ``_build/notebooks/<framework>/...``, so that the build
(``make notebooks``, ``make html``) finds it current and does not execute it again. A checked cell without
recorded outputs, or a recorded entry that no checked cell matches any more, fails the run too, with the command
that records the outputs again.

nbval runs on an imitated other CPU by default (``cpu="restricted"``, booktools/cpus.py), while
``make expected-outputs`` records on this machine's own: a checked cell passes only if it prints the same on
both. The executed notebooks say which CPU settings ran them (``metadata.d2l.cpu``); the build uses them either
way, and ``make expected-outputs`` executes again those that did not run on the native CPU.
"""

import json
import os
import subprocess
import sys

import nbformat

from booktools.cpus import CPUS
from booktools.execute import cache_key, default_jobs, environment_hash, longest_first
from booktools.expected import expected_path, first_line, inject, refresh_command
from booktools.kernels import KERNELS, install_kernels
from booktools.paths import BUILD, ROOT, TIMINGS, notebook_path, rel
from booktools.quotes import QuoteError, fill_notebook
from booktools.split import split

NBVAL = (
    BUILD / "nbval"
)  # the notebooks nbval executes: _build/nbval/<framework>/<source path>.ipynb


def prepare(source, framework, env_hash, folder=NBVAL, kernel=True):
    """Write nbval's notebook for one source and framework, into ``folder/<framework>/...``; return (path, cache
    key, problems). It executes in the framework's book kernel, or with ``kernel=False`` in the kernel its
    metadata names (a reader's ``python3``: nbval's ``--nbval-current-env`` in a fresh environment)."""
    nb = split(source, framework)
    key = cache_key(nb, framework, env_hash)
    unrecorded, stale = inject(nb, source, framework)
    path = folder / framework / rel(source).relative_to(rel(source).anchor).with_suffix(".ipynb")
    d2l = nb.metadata["d2l"]
    d2l["cache_key"] = key
    d2l["executed"] = str(executed_path(path))  # where booktools.nbval_plugin writes it
    d2l["expected"] = str(rel(expected_path(source, framework)))
    d2l["refresh"] = refresh_command(source, framework)
    if kernel:
        d2l["kernelspec"] = dict(nb.metadata["kernelspec"])
        nb.metadata["kernelspec"] = {
            "name": KERNELS[framework],
            "display_name": KERNELS[framework],
            "language": "python",
        }
    problems = [
        f"checked cell {cell.id} ({first_line(cell.source)!r}) has no recorded outputs"
        for cell in unrecorded
    ] + [f"recorded outputs of {first_line(e['code'])!r} match no checked cell" for e in stale]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path, key, problems


def executed_path(path):
    """Where the nbval plugin writes the notebook ``path`` once executed: beside it, ``<stem>.executed.ipynb``."""
    return path.with_name(path.stem + ".executed.ipynb")


def keep(path, source, framework):
    """Put the executed notebook of nbval's notebook ``path`` where the build reads it
    (``_build/notebooks/<framework>/...``), its record roles filled with this run's values as the build's
    executor fills them (booktools.quotes); return its seconds, or None where it did not execute to the end
    (no executed file) or its prose quotes a record the run did not show (printed)."""
    executed = executed_path(path)
    if not executed.exists():
        return None
    nb = nbformat.read(executed, as_version=4)
    d2l = nb.metadata["d2l"]
    for name in ("expected", "refresh"):
        d2l.pop(name, None)
    if "kernelspec" in d2l:
        nb.metadata["kernelspec"] = d2l.pop("kernelspec")
    target = notebook_path(source, framework)
    try:
        fill_notebook(nb, where=f"{rel(target)} [{framework}]")
    except QuoteError as err:  # the prose quotes a record that the run did not show
        print(f"FAILED: {err}", flush=True)
        return None
    nbformat.validate(nb)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    nbformat.write(nb, tmp)
    tmp.replace(target)
    executed.unlink()
    return d2l["seconds"]


def run_nbval(sources, frameworks, folder=NBVAL, pytest_args=(), jobs=None, cpu="restricted"):
    """Prepare, execute and compare, ``jobs`` notebooks at once (default: as the build, booktools.execute's
    ``default_jobs()``), longest first, with the kernels' CPU settings ``cpu`` (a name in booktools.cpus.CPUS);
    print a summary; return the exit status (0: all passed)."""
    if cpu not in CPUS:
        raise ValueError(f"cpu must be one of {sorted(CPUS)}; got {cpu!r}")
    install_kernels()
    env_hash = environment_hash()
    work = longest_first([(s, fw) for fw in frameworks for s in sources])
    prepared = [(s, fw, *prepare(s, fw, env_hash, folder)) for s, fw in work]
    jobs = min(default_jobs() if jobs is None else jobs, len(prepared))
    # pytest-xdist, each notebook whole on one worker (its cells share a kernel): --dist loadscope, as nbval's
    # documentation says; the workers take the notebooks in the order given
    parallel = ("-n", str(jobs), "--dist", "loadscope") if jobs > 1 else ()
    command = [
        *(
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "booktools.nbval_plugin",
        ),
        *("--nbval-lax", "--nbval-cell-timeout=1800", "--nbval-kernel-startup-timeout=600"),
        *(*parallel, *pytest_args),
        *(str(path) for _, _, path, _, _ in prepared),
    ]
    settings = " ".join(f"{k}={v!r}" for k, v in CPUS[cpu].items()) or "none"
    print(f"== nbval on the {cpu} CPU (settings: {settings})", flush=True)
    env = {**os.environ, **CPUS[cpu], "D2L_CPU": cpu}  # the kernels inherit it
    status = subprocess.run(command, cwd=ROOT, env=env).returncode
    print(f"== nbval ({cpu} CPU): each notebook executed once; the build reuses it", flush=True)
    kept = [(s, fw, keep(path, s, fw), problems) for s, fw, path, _, problems in prepared]
    return summarise(kept) or status


def summarise(results):
    """Print one line per (source, framework, seconds or None where not kept, problems), record the seconds in
    _build/timings.json, list the commands that record missing outputs; return 1 if any notebook was not kept or
    had problems, else 0."""
    timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    refresh, status = [], 0
    for source, fw, seconds, problems in results:
        if seconds is None:
            state, status = "not kept (a cell failed)", 1
        else:
            state = f"executed in {seconds:.1f} s, kept for the build"
            timings.setdefault(rel(source).as_posix(), {})[fw] = seconds
        print(f"{fw:<10} {rel(source)}: {state}")
        for problem in problems:
            print(f"  FAILED: {problem}")
        if problems:
            refresh.append(refresh_command(source, fw))
            status = 1
    if TIMINGS.parent.exists():
        TIMINGS.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
    if refresh:
        print(
            "Record the expected outputs (then review them with git diff):\n  "
            + "\n  ".join(refresh)
        )
    return status
