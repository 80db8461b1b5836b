"""Time the whole book: every page executed afresh in each framework's kernel, as the build does.

The goal of issue 12 is the whole book (every page x 3 frameworks) in at most 5 minutes on a quiet 2-core
machine, kernel start-up and imports included. This executes each notebook once, one after the other (the
build's executor, booktools/execute.py, with --force: the cache is ignored and then refreshed), and prints a
table of the seconds of every notebook, with the load average (1 min) before and after each, the totals per
framework and the whole book's, and the goal met or not. The times are also recorded in _build/timings.json
(``python -m booktools timings``).

    .venv/bin/python benchmarks/book_time.py                          # the whole book
    .venv/bin/python benchmarks/book_time.py --section transformer --framework pytorch

Run it on an otherwise idle machine: with other work running, the figures say little (the load average is
printed with each of them).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from booktools.execute import environment_hash, execute_one  # noqa: E402
from booktools.kernels import install_kernels  # noqa: E402
from booktools.paths import TIMINGS, rel, sources  # noqa: E402
from d2lcore import FRAMEWORKS  # noqa: E402

GOAL_SECONDS = 300  # issue 12: the whole book in at most 5 minutes on a quiet 2-core machine


def load():
    """The 1-minute load average."""
    return os.getloadavg()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", help="only pages whose path contains this text")
    parser.add_argument("--framework", choices=FRAMEWORKS, action="append")
    args = parser.parse_args()
    frameworks = args.framework or list(FRAMEWORKS)
    pages = sources(args.section)
    install_kernels()
    env_hash = environment_hash()
    rows, wall_start, load_start = {}, time.perf_counter(), os.getloadavg()
    for fw in frameworks:  # as the build: one framework's pages after the other's
        for page in pages:
            before = load()
            _, seconds = execute_one(page, fw, env_hash, force=True)
            rows.setdefault(rel(page).as_posix(), {})[fw] = (seconds, before, load())
            print(
                f"  {fw:<10} {rel(page)}: {seconds:.1f} s (load {before:.2f} -> {load():.2f})",
                flush=True,
            )
    wall = time.perf_counter() - wall_start

    print(
        f"\n{'notebook (seconds; load before/after)':<52}"
        + "".join(f"{fw:>22}" for fw in frameworks)
    )
    totals = dict.fromkeys(frameworks, 0.0)
    for name, row in rows.items():
        cells = []
        for fw in frameworks:
            seconds, before, after = row[fw]
            totals[fw] += seconds
            cells.append(f"{seconds:6.1f} ({before:4.2f}/{after:4.2f})")
        print(f"{name:<52}" + "".join(f"{c:>22}" for c in cells))
    print(f"{'total':<52}" + "".join(f"{totals[fw]:>15.1f}       " for fw in frameworks))
    book = sum(totals.values())
    load_end = os.getloadavg()
    print(
        f"\nwhole book: {book:.1f} s in the notebooks ({wall:.1f} s wall with the splitting and writing); "
        f"load average (1/5/15 min) {'/'.join(f'{x:.2f}' for x in load_start)} at the start, "
        f"{'/'.join(f'{x:.2f}' for x in load_end)} at the end"
    )
    if args.section is None and len(frameworks) == len(FRAMEWORKS):
        met = "met" if book <= GOAL_SECONDS else f"NOT met (by {book - GOAL_SECONDS:.0f} s)"
        print(f"goal: the whole book in <= {GOAL_SECONDS} s on a quiet 2-core machine: {met}")

    timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    for name, row in rows.items():
        timings.setdefault(name, {}).update({fw: round(v[0], 1) for fw, v in row.items()})
    TIMINGS.parent.mkdir(parents=True, exist_ok=True)
    TIMINGS.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
