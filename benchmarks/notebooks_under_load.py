"""How long the training notebooks take on a quiet machine and with one CPU-bound competing process.

Each notebook of "Bahdanau Attention" and "Training and Evaluating the Transformer", per framework, is split as the book
splits it and executed top to bottom with nbclient, in a plain ``python3`` kernel with no thread settings in its
environment (as a reader's Jupyter after ``pip install d2lcore[...]``: d2lcore makes the choice) or, with
``--kernel book``, in the book's kernel of its framework. "quiet" is the machine as it is (other work may be
running: the 1-minute load average is printed with every figure); "loaded" adds one Python busy loop that this
script starts before the run and stops after it. The conditions alternate, notebook by notebook.

    .venv/bin/python benchmarks/notebooks_under_load.py                    # 6 notebooks, quiet and loaded
    .venv/bin/python benchmarks/notebooks_under_load.py --framework pytorch --section transformer-training --repeats 3
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from seq2seq_run import ROOT

from booktools.kernels import KERNELS
from booktools.paths import CHAPTERS
from booktools.split import split
from d2lcore import FRAMEWORKS

SECTIONS = ("bahdanau-attention", "transformer-training")
THREAD_VARIABLES = (
    "D2L_NUM_THREADS",
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "TF_NUM_INTRAOP_THREADS",
)


def execute(section, framework, kernel):
    """Execute one notebook; return its wall time in seconds (kernel start included)."""
    from nbclient import NotebookClient

    nb = split(CHAPTERS / "attention" / f"{section}.md", framework)
    name = "python3" if kernel == "python3" else KERNELS[framework]
    with tempfile.TemporaryDirectory() as folder:
        client = NotebookClient(
            nb, kernel_name=name, timeout=3600, resources={"metadata": {"path": folder}}
        )
        start = time.perf_counter()
        client.execute()
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=FRAMEWORKS, action="append")
    parser.add_argument("--section", choices=SECTIONS, action="append")
    parser.add_argument("--kernel", choices=("python3", "book"), default="python3")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    for (
        variable
    ) in THREAD_VARIABLES:  # the kernels inherit this environment: leave the choice to d2lcore
        os.environ.pop(variable, None)
    os.environ.update({"TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONWARNINGS": "ignore"})
    os.chdir(ROOT)
    rows = []
    for section in args.section or SECTIONS:
        for framework in args.framework or FRAMEWORKS:
            times = {"quiet": [], "loaded": []}
            loads = {"quiet": [], "loaded": []}
            for _ in range(args.repeats):
                for condition in ("quiet", "loaded"):
                    competitor = None
                    if condition == "loaded":
                        competitor = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        time.sleep(2)
                    try:
                        load = os.getloadavg()[0]
                        seconds = execute(section, framework, args.kernel)
                        load = max(load, os.getloadavg()[0])
                    finally:
                        if competitor:
                            competitor.kill()
                            competitor.wait()
                    times[condition].append(seconds)
                    loads[condition].append(load)
                    print(
                        f"{section:<20}{framework:<11}{condition:<7}{seconds:7.1f} s  "
                        f"1-min load average up to {load:.2f}",
                        flush=True,
                    )
            quiet, loaded = statistics.median(times["quiet"]), statistics.median(times["loaded"])
            rows.append(
                (section, framework, quiet, max(loads["quiet"]), loaded, max(loads["loaded"]))
            )
    print(
        f"\nkernel: {args.kernel}; median of {args.repeats}; load: highest 1-min load average seen"
    )
    print(
        f"{'notebook':<20}{'framework':<11}{'quiet':>8}{'load':>6}{'loaded':>8}{'load':>6}{'ratio':>7}"
    )
    for section, framework, quiet, qload, loaded, lload in rows:
        print(
            f"{section:<20}{framework:<11}{quiet:8.1f}{qload:6.2f}{loaded:8.1f}{lload:6.2f}{loaded / quiet:7.2f}"
        )


if __name__ == "__main__":
    main()
