"""Time the book's Bahdanau-attention training run in each framework, and score its translations.

The run of section "Bahdanau Attention": the first 600 pairs of the project's English–French
corpus, batch 64, 10 steps, embedding 32, 32 hidden units, 2 GRU layers, dropout 0.1, Adam with
learning rate 0.005, 250 epochs, on d2l.try_gpu(). Each framework runs in a fresh Python process,
with the environment of the book's Jupyter kernel for that framework (booktools/kernels.py:
e.g. OMP_NUM_THREADS = number of cores for MXNet), so that imports do not interfere.

    .venv/bin/python benchmarks/bahdanau.py                       # all three frameworks
    .venv/bin/python benchmarks/bahdanau.py --framework pytorch --epochs 50

Prints, per framework: the wall time of train_seq2seq, its tokens/s and final loss per token,
the four translations with their BLEU (k = 2), and the load average before and after (the
timings mean little on a machine that other work keeps busy).
"""

import argparse
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from booktools.kernels import kernel_env  # noqa: E402
from d2lcore import FRAMEWORKS, MODULE_OF  # noqa: E402

EXAMPLES = [
    ("go .", "va !"),
    ("i lost .", "j'ai perdu ."),
    ("he's calm .", "il est calme ."),
    ("i'm home .", "je suis chez moi ."),
]


def run_one(framework, epochs, seed):
    """The run itself, in this process; returns the figures as a dict."""
    d2l = importlib.import_module(MODULE_OF[framework])
    embed_size, num_hiddens, num_layers, dropout = 32, 32, 2, 0.1
    batch_size, num_steps, lr = 64, 10, 0.005
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(batch_size, num_steps)
    encoder = d2l.Seq2SeqEncoder(len(src_vocab), embed_size, num_hiddens, num_layers, dropout)
    decoder = d2l.Seq2SeqAttentionDecoder(
        len(tgt_vocab), embed_size, num_hiddens, num_layers, dropout
    )
    net = d2l.EncoderDecoder(encoder, decoder)
    load_before = os.getloadavg()
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed):
        losses = d2l.train_seq2seq(net, train_iter, lr, epochs, tgt_vocab, device)
    seconds = time.perf_counter() - start
    load_after = os.getloadavg()
    start = time.perf_counter()
    translations = []
    for eng, fra in EXAMPLES:
        translation, _ = d2l.predict_seq2seq(
            net, eng, src_vocab, tgt_vocab, num_steps, device, save_attention_weights=True
        )
        translations.append((eng, translation, d2l.bleu(translation, fra, k=2)))
    return {
        "framework": framework,
        "epochs": epochs,
        "train_seconds": seconds,
        "train_seq2seq_says": printed.getvalue().strip(),
        "final_loss_per_token": losses[-1],
        "translate_seconds": time.perf_counter() - start,
        "translations": translations,
        "load_before": load_before,
        "load_after": load_after,
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS")},
    }


def report(result):
    load = "/".join(f"{x:.2f}" for x in result["load_before"])
    load_after = "/".join(f"{x:.2f}" for x in result["load_after"])
    print(f"== {result['framework']} ({result['epochs']} epochs) ==")
    print(f"   {result['train_seq2seq_says']}")
    print(
        f"   train_seq2seq: {result['train_seconds']:.1f} s wall; "
        f"translating 4 sentences: {result['translate_seconds']:.2f} s"
    )
    print(f"   load average (1/5/15 min) before {load}, after {load_after}; env {result['env']}")
    for eng, translation, score in result["translations"]:
        print(f"   {eng} => {translation}, bleu {score:.3f}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=[*FRAMEWORKS, "all"], default="all")
    parser.add_argument("--epochs", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="set OMP_NUM_THREADS for every framework (default: as in the book's kernels)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the child process: one framework, result as JSON on the last line
        print(json.dumps(run_one(args.framework, args.epochs, args.seed)))
        return
    frameworks = FRAMEWORKS if args.framework == "all" else [args.framework]
    for framework in frameworks:
        env = {**os.environ, **kernel_env(framework)}
        if args.threads is not None:
            env["OMP_NUM_THREADS"] = str(args.threads)
        command = [
            sys.executable,
            __file__,
            "--worker",
            f"--framework={framework}",
            f"--epochs={args.epochs}",
            f"--seed={args.seed}",
        ]
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"== {framework}: failed ==\n{done.stderr[-3000:]}")
            continue
        report(json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
