"""Time the whole book: every page executed afresh in each framework's kernel, as the build does.

The goal of issue 12 is the whole book (every page x 3 frameworks) in at most 5 minutes on a quiet 2-core
machine, kernel start-up and imports included. This executes every notebook once with the build's executor
(booktools/execute.py, with --force: the cache is ignored and then refreshed), as many at once as the build runs
(``--jobs``, default: one per CPU core, since each kernel computes on one thread; ``--jobs 1`` for one after the
other), and prints the seconds of every notebook, the totals per framework, the sum, the wall time of the whole
book (what the goal is about), the load average (1/5/15 min) at the start and at the end, and the goal met or
not. The times are also recorded in _build/timings.json (``python -m booktools timings``).

    .venv/bin/python benchmarks/book_time.py                          # the whole book
    .venv/bin/python benchmarks/book_time.py --jobs 1                 # one notebook after the other
    .venv/bin/python benchmarks/book_time.py --section transformer --framework pytorch

Run it on an otherwise idle machine: with other work running, the figures say little.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from booktools.execute import default_jobs, execute_all  # noqa: E402
from booktools.paths import notebook_path, rel, sources  # noqa: E402
from d2lcore import FRAMEWORKS  # noqa: E402

GOAL_SECONDS = 300  # issue 12: the whole book in at most 5 minutes on a quiet 2-core machine


def loads():
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", help="only pages whose path contains this text")
    parser.add_argument("--framework", choices=FRAMEWORKS, action="append")
    parser.add_argument("--jobs", type=int, help="notebooks at once (default: as the build)")
    args = parser.parse_args()
    frameworks = args.framework or list(FRAMEWORKS)
    pages = sources(args.section)
    jobs = args.jobs or default_jobs()
    load_start, wall_start = loads(), time.perf_counter()
    execute_all(pages, frameworks, force=True, jobs=jobs)
    wall = time.perf_counter() - wall_start
    load_end = loads()

    print(f"\n{'notebook (seconds)':<62}" + "".join(f"{fw:>12}" for fw in frameworks))
    totals = dict.fromkeys(frameworks, 0.0)
    for page in pages:
        row = []
        for fw in frameworks:
            seconds = nbformat.read(notebook_path(page, fw), as_version=4).metadata.d2l.seconds
            totals[fw] += seconds
            row.append(f"{seconds:12.1f}")
        print(f"{rel(page).as_posix():<62}" + "".join(row))
    print(f"{'total':<62}" + "".join(f"{totals[fw]:12.1f}" for fw in frameworks))
    print(
        f"\nwhole book: {wall:.1f} s wall, {jobs} notebook(s) at once ({sum(totals.values()):.1f} s summed over"
        f" the notebooks); load average (1/5/15 min) {load_start} at the start, {load_end} at the end"
    )
    if args.section is None and len(frameworks) == len(FRAMEWORKS):
        met = "met" if wall <= GOAL_SECONDS else f"NOT met (by {wall - GOAL_SECONDS:.0f} s)"
        print(f"goal: the whole book in <= {GOAL_SECONDS} s on a quiet 2-core machine: {met}")


if __name__ == "__main__":
    main()
