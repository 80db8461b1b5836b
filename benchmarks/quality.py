"""Translation quality of two versions of the code, over several seeds: the held-out BLEU of the
Bahdanau and Transformer training runs of the pages (benchmarks/side_by_side.py's runs of "ours",
same data, same epochs), once per seed and version, and the mean per version: the mean
per-sentence BLEU (D2L's variant), and beside it sacreBLEU's corpus BLEU and chrF (0 ... 100; "-"
for a version whose side_by_side.py does not report them).

A version is a checkout of this repository (a ``git worktree`` of an older commit, say); each run is
a fresh process of that checkout's side_by_side.py, so it imports that checkout's d2lcore. Runs
alternate between the versions, seed by seed. A change that should not cost quality is judged by
the difference of the means, not by one run: one seed's BLEU moves by several hundredths.

    git worktree add ../old <commit>
    .venv/bin/python benchmarks/quality.py --version old=../old --version new=.
    .venv/bin/python benchmarks/quality.py --version old=../old --version new=. \\
        --framework pytorch --model bahdanau --seeds 1 2 3

Prints each run (held-out BLEU, corpus BLEU and chrF, final loss per token, seconds, load
average) and, per model and framework, the mean and spread of each version's held-out BLEU, its
mean corpus BLEU and chrF, and the difference new - old of the means (the last version minus the
first).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from seq2seq_run import load_text
from side_by_side import EPOCHS

from booktools.kernels import kernel_env
from d2lcore import FRAMEWORKS

MODELS = tuple(EPOCHS)


def run(tree, model, framework, seed, epochs):
    """One training run of ``tree``'s code in a fresh process; its figures as a dict."""
    script = Path(tree).resolve() / "benchmarks" / "side_by_side.py"
    command = [sys.executable, str(script), f"--framework={framework}", "--worker=ours"]
    command += [f"--model={model}", f"--seed={seed}", f"--epochs={epochs or EPOCHS[model]}"]
    env = {**os.environ, **kernel_env(framework)}
    done = subprocess.run(command, env=env, cwd=script.parents[1], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"{tree}, {model}, {framework}, seed {seed} failed:\n{done.stderr[-3000:]}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mean(values):
    """The mean, or None where a run did not report the figure (an older version)."""
    return None if None in values else statistics.mean(values)


def _figure(value):
    return "-" if value is None else f"{value:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="append", required=True, help="NAME=PATH (twice)")
    parser.add_argument("--framework", choices=[*FRAMEWORKS, "all"], default="all")
    parser.add_argument("--model", choices=[*MODELS, "all"], default="all")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=None, help="(default: the pages')")
    args = parser.parse_args()
    versions = dict(v.split("=", 1) for v in args.version)
    frameworks = FRAMEWORKS if args.framework == "all" else [args.framework]
    models = MODELS if args.model == "all" else [args.model]
    summary = []
    for model in models:
        for framework in frameworks:
            print(f"== {model}, {framework}: held-out BLEU per seed ==", flush=True)
            bleus = {name: [] for name in versions}
            corpus = {name: {"corpus BLEU": [], "chrF": []} for name in versions}
            for seed in args.seeds:
                for name, tree in versions.items():
                    r = run(tree, model, framework, seed, args.epochs)
                    bleus[name].append(r["heldout_bleu"])
                    corpus[name]["corpus BLEU"].append(r.get("heldout_corpus_bleu"))
                    corpus[name]["chrF"].append(r.get("heldout_chrf"))
                    print(
                        f"   {name:>6} seed {seed}: held-out BLEU {r['heldout_bleu']:.4f}, "
                        f"corpus BLEU {_figure(r.get('heldout_corpus_bleu'))}, "
                        f"chrF {_figure(r.get('heldout_chrf'))}, "
                        f"loss per token {r['final_loss']:.4f}, {r['seconds']:.1f} s, "
                        f"load {load_text(*r['load'])}",
                        flush=True,
                    )
            means = {name: statistics.mean(b) for name, b in bleus.items()}
            first, last = list(versions)[0], list(versions)[-1]
            line = "; ".join(
                f"{name} mean {means[name]:.4f} ({min(b):.4f}-{max(b):.4f}), "
                + ", ".join(f"{m} {_figure(_mean(v))}" for m, v in corpus[name].items())
                for name, b in bleus.items()
            )
            difference = means[last] - means[first]
            summary.append(
                f"{model:>11} {framework:>10}: {line}; {last} - {first} {difference:+.4f}"
            )
            print("   " + summary[-1], flush=True)
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"== summary over seeds {args.seeds} (load average now {load}) ==")
    for line in summary:
        print("   " + line)


if __name__ == "__main__":
    main()
