"""Execute the per-framework notebooks, each in its framework's kernel, with a cache.

An executed notebook stores the key it was executed under (``metadata.d2l.cache_key``): a hash of its cells, of
``d2lcore``, of ``data/``, of the pinned versions (``requirements.txt``, ``constraints.txt``) and of the kernel's
environment. A notebook whose key has not changed is not executed again.
"""

import hashlib
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

from booktools.kernels import KERNELS, install_kernels, kernel_env
from booktools.paths import DURATIONS, ROOT, TIMINGS, notebook_path, rel, tree_hash
from booktools.quotes import QuoteError, fill_notebook
from booktools.split import split
from d2lcore.threads import cpu_threads

JOBS = "D2L_BOOK_JOBS"
MAX_JOBS = 4  # each kernel holds a framework in memory (up to about 1 GiB)


def default_jobs():
    """Notebooks executed at once: ``$D2L_BOOK_JOBS`` if set, else one per group of CPU cores that a kernel
    computes on (d2lcore gives each framework one thread unless ``$D2L_NUM_THREADS`` says otherwise,
    d2lcore.threads), at most 4. On a 2-core machine: 2."""
    value = os.environ.get(JOBS)
    if value is not None:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(
                f"{JOBS} must be a whole number of notebooks >= 1; got {value!r}. "
                "Unset it to execute one notebook per CPU core."
            )
        return int(value)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_JOBS, (cores or 1) // (cpu_threads() or 1)))


def recorded_durations():
    """{source path relative to the repository: {framework: seconds}} from booktools/durations.json."""
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def longest_first(work):
    """``work``, a list of (source, framework), ordered by the seconds each took when its outputs were last
    recorded (booktools/durations.json), longest first, so that parallel jobs end together; unknown ones first,
    then book order."""
    known = recorded_durations()

    def seconds(item):
        source, fw = item
        return known.get(rel(source).as_posix(), {}).get(fw, float("inf"))

    return sorted(work, key=seconds, reverse=True)  # sorted() is stable: ties keep book order


def record_durations(sources, frameworks):
    """Write the seconds of the executed notebooks of ``sources`` × ``frameworks`` to booktools/durations.json
    (whole seconds: the file only orders the work)."""
    known = recorded_durations()
    for fw in frameworks:
        for source in sources:
            nb = nbformat.read(notebook_path(source, fw), as_version=4)
            seconds = nb.metadata.get("d2l", {}).get("seconds")
            if seconds is not None:
                known.setdefault(rel(source).as_posix(), {})[fw] = max(1, round(seconds))
    DURATIONS.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")


class ExecutionFailed(RuntimeError):
    """A cell failed; the message names the notebook, the framework and the cell."""


def environment_hash():
    """What every notebook's cache key depends on besides its own cells."""
    return tree_hash(
        ROOT / "d2lcore", ROOT / "data", suffixes=(".py", ".txt", ".tsv", ".json", ".md")
    ) + tree_hash(ROOT / "requirements.txt", ROOT / "constraints.txt")


def cache_key(nb, framework, env_hash):
    cells = [{k: c[k] for k in ("id", "cell_type", "source", "metadata")} for c in nb.cells]
    payload = json.dumps([cells, framework, kernel_env(framework), env_hash], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _cached(path, key, native=False):
    """Whether the notebook at ``path`` was executed under ``key`` (and, with ``native``, on the native CPU:
    ``make nbval`` runs on an imitated one, booktools/cpus.py)."""
    if not path.exists():
        return False
    try:
        old = nbformat.read(path, as_version=4)
    except Exception:  # a damaged file is executed again
        return False
    d2l = old.metadata.get("d2l", {})
    return d2l.get("cache_key") == key and (not native or d2l.get("cpu", "native") == "native")


def stale(sources, frameworks):
    """The (source, framework) pairs whose executed notebook is missing or was executed under another key (its
    cells, d2lcore or the data changed since): what ``booktools notebooks`` would execute again."""
    env_hash = environment_hash()
    return [
        (source, fw)
        for source in sources
        for fw in frameworks
        if not _cached(notebook_path(source, fw), cache_key(split(source, fw), fw, env_hash))
    ]


def _failed_cell(nb):
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return i, cell
    return None, None


def execute_one(source, framework, env_hash, force=False, timeout=1800, native=False):
    """Split and execute one notebook unless cached (with ``native``: cached from a run on the native CPU);
    return (path, seconds or None if cached)."""
    nb = split(source, framework)
    key = cache_key(nb, framework, env_hash)
    path = notebook_path(source, framework)
    if not force and _cached(path, key, native):
        return path, None
    path.parent.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(
        nb,
        kernel_name=KERNELS[framework],
        timeout=timeout,
        # one stream output per cell and name: a print is not split by when the kernel flushed it
        coalesce_streams=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as err:
        i, cell = _failed_cell(nb)
        where = (
            f"cell {cell['id']} (code cell starting {cell['source'].splitlines()[0]!r})"
            if cell
            else "a cell"
        )
        raise ExecutionFailed(
            f"{rel(source)} [{framework}]: {where} failed.\n"
            f"Re-run it with: make notebooks SECTION={rel(source).stem} FRAMEWORK={framework}\n{err}"
        ) from None
    seconds = time.perf_counter() - start
    try:  # the prose's record roles become this run's values (booktools.quotes)
        fill_notebook(nb, where=f"{rel(source)} [{framework}]")
    except QuoteError as err:
        raise ExecutionFailed(str(err)) from None
    nb.metadata["d2l"]["cache_key"] = key
    nb.metadata["d2l"]["seconds"] = round(seconds, 1)
    tmp = path.with_name(path.name + ".tmp")
    nbformat.write(nb, tmp)
    tmp.replace(path)
    return path, seconds


def execute_all(sources, frameworks, force=False, jobs=None, native=False):
    """Execute every (source, framework) notebook, ``jobs`` at once (default: ``default_jobs()``), longest
    first, printing progress; record the times in _build/timings.json. ``native``: execute again the notebooks
    that ran on an imitated CPU (to record expected outputs on this machine's own)."""
    install_kernels()  # cheap, and keeps the kernels in step with booktools/kernels.py
    env_hash = environment_hash()
    work = longest_first([(s, fw) for fw in frameworks for s in sources])
    timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    total = len(work)
    jobs = min(default_jobs() if jobs is None else jobs, total)
    failures = []

    def report(n, source, fw, seconds):
        state = "cached" if seconds is None else f"executed in {seconds:.1f} s"
        print(f"[{n}/{total}] {fw:<10} {rel(source)}: {state}", flush=True)
        if seconds is not None:
            timings.setdefault(rel(source).as_posix(), {})[fw] = round(seconds, 1)

    def finish(n, source, fw, result):
        try:
            _, seconds = result()
        except ExecutionFailed as err:
            failures.append(f"{rel(source)} [{fw}]")
            print(f"FAILED: {err}", flush=True)
            return
        report(n, source, fw, seconds)

    if jobs <= 1:
        for n, (source, fw) in enumerate(work, 1):
            print(f"[{n}/{total}] {fw:<10} {rel(source)} ...", flush=True)
            finish(
                n,
                source,
                fw,
                lambda s=source, f=fw: execute_one(s, f, env_hash, force, native=native),
            )
    else:
        with ProcessPoolExecutor(jobs) as pool:
            futures = {
                pool.submit(execute_one, s, fw, env_hash, force, native=native): (s, fw)
                for s, fw in work
            }
            for n, future in enumerate(as_completed(futures), 1):
                finish(n, *futures[future], future.result)
    TIMINGS.parent.mkdir(parents=True, exist_ok=True)
    TIMINGS.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
    if failures:
        raise ExecutionFailed(
            f"{len(failures)} notebook(s) failed (see above): " + ", ".join(failures)
        )


def record_expected(sources, frameworks):
    """Record the checked outputs of the executed notebooks (booktools/expected.py), printing what changed, and
    their seconds (booktools/durations.json)."""
    from booktools.expected import expected_path, record

    record_durations(sources, frameworks)
    for fw in frameworks:
        for source in sources:
            nb = nbformat.read(notebook_path(source, fw), as_version=4)
            state = "updated" if record(source, fw, nb) else "unchanged"
            print(f"{rel(expected_path(source, fw))}: {state}")
