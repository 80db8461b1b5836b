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
from booktools.expected import first_line, inject, refresh_command
from booktools.kernels import install_kernels
from booktools.paths import BUILD, KERNELS, ROOT, TIMINGS, notebook_path, rel
from booktools.split import split

NBVAL = (
    BUILD / "nbval"
)  # the notebooks nbval executes: _build/nbval/<framework>/<source path>.ipynb


def prepare(source, framework, env_hash, folder=NBVAL):
    """Write nbval's notebook for one source and framework; return (path, cache key, problems)."""
    nb = split(source, framework)
    key = cache_key(nb, framework, env_hash)
    unrecorded, stale = inject(nb, source, framework)
    d2l = nb.metadata["d2l"]
    d2l["cache_key"] = key
    d2l["target"] = str(notebook_path(source, framework))
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
    path = folder / framework / rel(source).relative_to(rel(source).anchor).with_suffix(".ipynb")
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path, key, problems


def _mtime(path):
    return path.stat().st_mtime_ns if path.exists() else None


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
    before = {path: _mtime(notebook_path(s, fw)) for s, fw, path, _, _ in prepared}
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
        *("--nbval-lax", "--nbval-cell-timeout=1800", *parallel, *pytest_args),
        *(str(path) for _, _, path, _, _ in prepared),
    ]
    settings = " ".join(f"{k}={v!r}" for k, v in CPUS[cpu].items()) or "none"
    print(f"== nbval on the {cpu} CPU (settings: {settings})", flush=True)
    env = {**os.environ, **CPUS[cpu], "D2L_CPU": cpu}  # the kernels inherit it
    status = subprocess.run(command, cwd=ROOT, env=env).returncode
    timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    failed = []
    print(f"== nbval ({cpu} CPU): each notebook executed once; the build reuses it", flush=True)
    for source, fw, path, key, problems in prepared:
        target = notebook_path(source, fw)
        written = _mtime(target) != before[path]
        d2l = nbformat.read(target, as_version=4).metadata.get("d2l", {}) if written else {}
        if d2l.get("cache_key") == key:
            state = f"executed in {d2l['seconds']:.1f} s, kept for the build"
            timings.setdefault(rel(source).as_posix(), {})[fw] = d2l["seconds"]
        else:
            state = "not kept (a cell failed)"
        print(f"{fw:<10} {rel(source)}: {state}")
        for problem in problems:
            print(f"  FAILED: {problem}")
        if problems:
            failed.append(f"{refresh_command(source, fw)}")
    if TIMINGS.parent.exists():
        TIMINGS.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
    if failed:
        print(
            "Record the expected outputs (then review them with git diff):\n  "
            + "\n  ".join(failed)
        )
    return status or (1 if failed else 0)
