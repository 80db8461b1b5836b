"""What the benchmarks share: the four test sentences, one timed training run with its
translations, its report, running a framework's worker in a fresh process with the environment
of the book's kernel (booktools/kernels.py), and the head and writing of a study's measurement
file."""

import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from booktools.kernels import kernel_env  # noqa: E402
from d2lcore import records  # noqa: E402
from d2lcore.threads import cpu_threads  # noqa: E402

SEED = 1
"""The seed of the training runs: the one the Bahdanau and Transformer pages set before training
(``d2l.set_seed(1)``; tests/test_benchmarks.py checks it), so a benchmark trains the pages' model."""

EXAMPLES = [
    ("go .", "va !"),
    ("i lost .", "j'ai perdu ."),
    ("he's calm .", "il est calme ."),
    ("i'm home .", "je suis chez moi ."),
]


def measure_training(d2l, net, train_iter, src_vocab, tgt_vocab, lr, epochs, num_steps, device):
    """Train ``net`` with d2l.train_seq2seq, then translate EXAMPLES; returns the figures."""
    load_before = os.getloadavg()
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed), records.collect() as shown:
        losses = d2l.train_seq2seq(net, train_iter, lr, epochs, tgt_vocab, device)
    seconds = time.perf_counter() - start
    load_after = os.getloadavg()
    training = next((r for r in reversed(shown) if r.name == "training"), None)
    start = time.perf_counter()
    translations = []
    for eng, fra in EXAMPLES:
        translation, _ = d2l.predict_seq2seq(
            net, eng, src_vocab, tgt_vocab, num_steps, device, save_attention_weights=True
        )
        translations.append((eng, translation, d2l.bleu(translation, fra, k=2)))
    return {
        "epochs": epochs,
        "train_seconds": seconds,
        "train_seq2seq_says": training.text if training else printed.getvalue().strip(),
        "tokens_per_second": training["tokens_per_second"] if training else None,
        "final_loss_per_token": losses[-1],
        "translate_seconds": time.perf_counter() - start,
        "translations": translations,
        "load_before": load_before,
        "load_after": load_after,
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS")},
    }


def load_text(before, after):
    return (
        "/".join(f"{x:.2f}" for x in before)
        + " before, "
        + "/".join(f"{x:.2f}" for x in after)
        + " after"
    )


def report_training(result, verdict=None):
    """Print a measure_training result; ``verdict``, a line against targets, goes before the
    load average."""
    seconds, speed = result["train_seconds"], result["tokens_per_second"]
    print(f"   {result['train_seq2seq_says']}")
    print(
        f"   train_seq2seq: {seconds:.1f} s wall, "
        f"{'?' if speed is None else f'{speed:.0f}'} tokens/s, "
        f"loss per token {result['final_loss_per_token']:.3f}; "
        f"translating 4 sentences: {result['translate_seconds']:.2f} s"
    )
    if verdict:
        print(f"   {verdict}")
    load = load_text(result["load_before"], result["load_after"])
    print(f"   load average (1/5/15 min) {load}; env {result['env']}")
    for eng, translation, score in result["translations"]:
        print(f"   {eng} => {translation}, bleu {score:.3f}")
    sys.stdout.flush()


def run_worker(script, framework, arguments, threads=None):
    """Run ``script --framework=<framework> *arguments`` in a fresh process with the kernel's
    environment; returns the JSON of its last printed line, or None after printing the error."""
    env = {**os.environ, **kernel_env(framework)}
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    command = [sys.executable, script, f"--framework={framework}", *arguments]
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"== {framework}: failed ==\n{done.stderr[-3000:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def study_head(what, started, threads=None):
    """The head of a study's measurement file: what it holds, the command that wrote it, the day
    ``started`` (a datetime) and the machine (``threads``: the workers' threads per operation, if
    not this process's)."""
    return {
        "what": what,
        "command": " ".join([f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]]),
        "date": started.strftime("%Y-%m-%d"),
        "machine": {
            "cores": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "threads_per_operation": cpu_threads() if threads is None else threads,
            "nice": os.nice(0),
        },
    }


def write_study(out, data):
    """Write the measurement file ``out`` (JSON), its folder made if needed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
