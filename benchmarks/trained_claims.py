"""The book's trained claims over seeds and CPUs: each checked cell that compares a trained outcome with a
threshold, run again with other training seeds, on this machine's own CPU and on the imitated one.

A different CPU (or build of a library) perturbs a training run much as a different seed does, so a threshold that
a checked cell asserts must clear every seed with a margin. The claims (CLAIMS) are:

- ``reversal`` (*Bahdanau Attention*): the reversal task's model; ``share`` is the share of output steps whose
  largest attention weight falls on the position reversal copies, ``weight`` the mean weight they put there,
  ``exact`` the strings of 100 reversed exactly, ``next`` the share of the other steps whose largest weight falls
  on the position after it (1 where there are none). The page asserts ``share >= 0.9``.
- ``heads`` (*Multi-Head Attention*): the two trained heads on the neighbour task; ``left`` and ``right`` are the
  shares of queries whose largest weight falls on the left and the right neighbour, ``split`` whether the two
  neighbours went to different heads. The page asserts ``split`` and ``min(left, right) >= 0.95``.

The worker runs the page's own code: the framework's notebook (booktools.split), its cells up to the claim once,
then the cells of the recipe again for every seed, with the page's ``d2l.set_seed(...)`` given the seed. So the
recipe measured is the page's, whatever it becomes. Each (framework, CPU setting) is one fresh process with the
environment of the book's kernel (booktools/kernels.py), plus, for ``restricted``, the imitated CPU's settings
(booktools/cpus.py); TensorFlow also runs with its oneDNN operations on (``reader``), as in a reader's own kernel.

    .venv/bin/python benchmarks/trained_claims.py                        # all claims, frameworks, CPUs, seeds 0-9
    .venv/bin/python benchmarks/trained_claims.py --claim heads --framework pytorch --seeds 0 1 2
    .venv/bin/python benchmarks/trained_claims.py --claim reversal --replace num_epochs=12=num_epochs=20 \
        --out /tmp/try.json                          # a recipe change tried before the page is edited

Prints every run and, per claim, framework and CPU setting, the minimum, median and maximum of each figure; writes
them to data/measurements/trained_claims.json (again after every worker, so a stopped run keeps what it finished).
"""

import argparse
import contextlib
import datetime
import hashlib
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from booktools.cpus import RESTRICTED  # noqa: E402
from booktools.kernels import kernel_env  # noqa: E402
from d2lcore import FRAMEWORKS  # noqa: E402

OUT = ROOT / "data" / "measurements" / "trained_claims.json"
PAGES = ROOT / "chapters" / "attention"
CLAIMS = {
    # page, the first cell of the recipe, the cell whose result is the claim's record, the record's variable,
    # the thresholds the page asserts (figure -> minimum)
    "reversal": {
        "page": "bahdanau-attention.md",
        "start": r"reversal_arrays\(",
        "end": r"evaluate_reversal\(",
        "record": "reversal",
        "figures": ("share", "weight", "exact", "next"),
        "threshold": {"share": 0.9},
    },
    "heads": {
        "page": "multihead-attention.md",
        "start": r"d2l\.set_seed\(\d+\)\nnet = MultiHeadAttention",
        "end": r"show_neighbour_heads\(",
        "record": "heads",
        "figures": ("left", "right", "split"),
        "threshold": {"worst": 0.95},
        "required": {"split": 1},
    },
}
SETTINGS = {
    "native": {},
    "restricted": RESTRICTED,
    # TensorFlow in a reader's kernel: oneDNN's operations on (the book's kernels turn them off)
    "reader": {"TF_ENABLE_ONEDNN_OPTS": "1"},
}


def settings_for(framework):
    return [s for s in SETTINGS if s != "reader" or framework == "tensorflow"]


def recipe(claim, framework):
    """(prelude, loop): the code of the page's cells before the recipe, and of the recipe's cells."""
    from booktools.split import SETUP_TAG, split

    spec = CLAIMS[claim]
    nb = split(PAGES / spec["page"], framework)
    cells = [
        c.source
        for c in nb.cells
        if c.cell_type == "code" and SETUP_TAG not in c.metadata.get("tags", [])
    ]
    start = next(i for i, c in enumerate(cells) if re.search(spec["start"], c))
    end = next(i for i, c in enumerate(cells) if re.search(spec["end"], c))
    loop = cells[start : end + 1]
    if not any(re.search(r"d2l\.set_seed\(\d+\)", c) for c in loop):
        raise SystemExit(f"{claim}: no d2l.set_seed(...) in the recipe's cells")
    return cells[:start], loop


def recipe_hash(claim, framework):
    """A SHA-256 of the page's recipe code for ``framework``: the measurement file keeps it, and a test fails once
    the page's recipe is no longer the one measured (tests/test_measurements.py)."""
    return hashlib.sha256("\n".join(recipe(claim, framework)[1]).encode()).hexdigest()


def run_claim(claim, framework, seeds, replace=()):
    """In this process: the page's cells once, then the recipe for each seed, with each (old, new) of
    ``replace`` substituted in its code; print one JSON line per seed."""
    import matplotlib
    import numpy

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    prelude, loop = recipe(claim, framework)
    for old, new in replace:
        if not any(old in cell for cell in loop):
            raise SystemExit(f"--replace: {old!r} is not in the recipe's code")
        loop = [cell.replace(old, new) for cell in loop]
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in prelude:
            exec(compile(cell, f"<{claim} prelude>", "exec"), namespace)
            plt.close("all")
    spec = CLAIMS[claim]
    misses = []
    if claim == "reversal":  # where the misses fall: the page's evaluation, its translator watched
        d2l = namespace["d2l"]
        evaluate = d2l.evaluate_reversal

        def watched(translate, *args, **kwargs):
            def translate_and_watch(source):
                output, attention = translate(source)
                n = len(source.split())
                for i, weights in enumerate(attention[:n]):
                    best = int(numpy.argmax(d2l.to_numpy(weights)))
                    if best != n - 1 - i:
                        misses.append(best == n - i)
                return output, attention

            return evaluate(translate_and_watch, *args, **kwargs)

        d2l.evaluate_reversal = watched
    for seed in seeds:
        misses.clear()
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in loop:
                cell = re.sub(r"d2l\.set_seed\(\d+\)", f"d2l.set_seed({seed})", cell)
                exec(compile(cell, f"<{claim} seed {seed}>", "exec"), namespace)
                plt.close("all")
        record = namespace[spec["record"]]
        if claim == "reversal":
            figures = {
                "share": record["share"],
                "weight": record["weight"],
                "exact": record["exact"],
                "next": sum(misses) / len(misses) if misses else 1.0,
            }
        else:
            figures = {
                "left": record["left"],
                "right": record["right"],
                "worst": min(record["left"], record["right"]),
                "split": int(record["left_head"] != record["right_head"]),
            }
        seconds = round(time.perf_counter() - start, 1)
        print(json.dumps({"seed": seed, "seconds": seconds, **figures}), flush=True)


def worker(claim, framework, setting, seeds, replace=()):
    """Run one (claim, framework, CPU setting) in a fresh process; yield its per-seed results as they come."""
    env = {**os.environ, **kernel_env(framework), **SETTINGS[setting], "MPLBACKEND": "Agg"}
    command = [
        sys.executable,
        __file__,
        "--worker",
        f"--claim={claim}",
        f"--framework={framework}",
        *(f"--replace={old}={new}" for old, new in replace),
        "--seeds",
        *map(str, seeds),
    ]
    with subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        for line in process.stdout:
            if line.startswith("{"):
                yield json.loads(line)
        error = process.stderr.read()
    if process.returncode != 0:
        raise SystemExit(f"{claim}, {framework}, {setting}: the worker failed\n{error[-3000:]}")


def split_replacement(text):
    """``"num_epochs=12=num_epochs=20"`` -> ``("num_epochs=12", "num_epochs=20")``: halves at the middle '='."""
    parts = text.split("=")
    if len(parts) % 2 == 0:
        middle = len(parts) // 2
        return "=".join(parts[:middle]), "=".join(parts[middle:])
    raise SystemExit(f"--replace wants OLD=NEW with as many '=' in OLD as in NEW; got {text!r}")


def summarise(runs, claim):
    """{figure: {"min", "median", "max"}} over ``runs``."""
    figures = {k for r in runs for k in r if k not in ("seed", "seconds")}
    return {
        f: {
            "min": min(r[f] for r in runs),
            "median": statistics.median(r[f] for r in runs),
            "max": max(r[f] for r in runs),
        }
        for f in sorted(figures)
    }


def margin(summary, claim):
    """The smallest (minimum over seeds - threshold) of the claim's thresholds; -1 where a required value
    (every seed's) is missed."""
    if any(summary[f]["min"] != v for f, v in CLAIMS[claim].get("required", {}).items()):
        return -1.0
    return min(summary[f]["min"] - t for f, t in CLAIMS[claim]["threshold"].items())


def write(out, results, started):
    """The measurement file; results measured before for other (claim, framework, setting) are kept."""
    if out.exists():
        measured = {(r["claim"], r["framework"], r["setting"]) for r in results}
        old = json.loads(out.read_text(encoding="utf-8"))["results"]
        results = [
            r for r in old if (r["claim"], r["framework"], r["setting"]) not in measured
        ] + results
    data = {
        "what": "The book's trained claims over seeds and CPU settings; written by benchmarks/trained_claims.py",
        "command": "benchmarks/trained_claims.py " + " ".join(sys.argv[1:]),
        "date": started.strftime("%Y-%m-%d"),
        "machine": {
            "cores": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        },
        "thresholds": {c: CLAIMS[c]["threshold"] for c in CLAIMS},
        "results": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claim", choices=CLAIMS, action="append")
    parser.add_argument("--framework", choices=FRAMEWORKS, action="append")
    parser.add_argument("--setting", choices=SETTINGS, action="append")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="substitute NEW for OLD in the recipe's code (the first '=' after a '=' that ends OLD's "
        "keyword separates them: num_epochs=12=num_epochs=20)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    replace = [split_replacement(r) for r in args.replace]
    if args.worker:
        run_claim(args.claim[0], args.framework[0], args.seeds, replace)
        return
    started = datetime.datetime.now(datetime.UTC)
    results = []
    for claim in args.claim or CLAIMS:
        for framework in args.framework or FRAMEWORKS:
            for setting in args.setting or settings_for(framework):
                if setting not in settings_for(framework):
                    continue
                load = os.getloadavg()[0]
                runs = []
                for run in worker(claim, framework, setting, args.seeds, replace):
                    runs.append(run)
                    print(f"{claim:<8} {framework:<10} {setting:<10} {json.dumps(run)}", flush=True)
                summary = summarise(runs, claim)
                results.append(
                    {
                        "claim": claim,
                        "framework": framework,
                        "setting": setting,
                        "seeds": args.seeds,
                        "replace": args.replace,
                        "recipe": recipe_hash(claim, framework),
                        "date": started.strftime("%Y-%m-%d"),
                        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
                        "runs": runs,
                        "summary": summary,
                        "margin": margin(summary, claim),
                    }
                )
                write(args.out, results, started)
                figures = ", ".join(
                    f"{f} {s['min']:.3f} / {s['median']:.3f} / {s['max']:.3f}"
                    for f, s in summary.items()
                )
                print(
                    f"== {claim} {framework} {setting}: min / median / max over {len(runs)} seeds: "
                    f"{figures}; margin {margin(summary, claim):+.3f} (load {load:.2f})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
