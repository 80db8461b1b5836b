"""TensorFlow's training of Bahdanau Attention and The Transformer in two checkouts of the book,
side by side: the first epoch (tracing the training step, its first run) and the later epochs,
in CPU seconds of the process (less disturbed by other programs on a shared machine than wall
seconds, which are also shown) and wall seconds, and the final loss per token, printed in full
so that bit-identical training shows as the same number.

Runs alternate between the checkouts (A B, B A, ...), each a fresh process with the environment
of the book's kernel and the pages' seed; medians over the pairs, with the load average.

    .venv/bin/python benchmarks/tf_epochs.py --other ../main --model transformer --epochs 20
    .venv/bin/python benchmarks/tf_epochs.py --other ../old --other-python ../old/.venv/bin/python
"""

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = {  # the pages' hyperparameters, as in side_by_side.py
    "bahdanau": (32, 32, 2, 0.1),  # embed_size, num_hiddens, num_layers, dropout
    "transformer": (
        32,
        64,
        4,
        2,
        0.1,
    ),  # num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout
}
BATCH_SIZE, NUM_STEPS, LR, SEED = 64, 10, 0.005, 1


def worker(model, epochs):
    """Train in this process with the d2lcore found first on sys.path; print one JSON line."""
    import d2lcore.tensorflow as d2l
    from d2lcore import records

    d2l.set_seed(SEED)
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(BATCH_SIZE, NUM_STEPS)
    if model == "bahdanau":
        encoder = d2l.Seq2SeqEncoder(len(src_vocab), *SIZES[model])
        decoder = d2l.Seq2SeqAttentionDecoder(len(tgt_vocab), *SIZES[model])
    else:
        encoder = d2l.TransformerEncoder(len(src_vocab), *SIZES[model])
        decoder = d2l.TransformerDecoder(len(tgt_vocab), *SIZES[model])
    net = d2l.EncoderDecoder(encoder, decoder)
    starts = []  # (CPU, wall) seconds at the start of each epoch

    class Clock:
        def __iter__(self):
            starts.append((time.process_time(), time.perf_counter()))
            return iter(train_iter)

    begin = (time.process_time(), time.perf_counter())
    with contextlib.redirect_stdout(io.StringIO()), records.collect():
        losses = d2l.train_seq2seq(net, Clock(), LR, epochs, tgt_vocab, d2l.try_gpu())
    end = (time.process_time(), time.perf_counter())
    print(
        json.dumps(
            {
                "first_cpu": starts[1][0] - begin[0],
                "first_wall": starts[1][1] - begin[1],
                "epoch_cpu": (end[0] - starts[1][0]) / (epochs - 1),
                "epoch_wall": (end[1] - starts[1][1]) / (epochs - 1),
                "loss": repr(losses[-1]),
                "load": os.getloadavg()[0],
            }
        )
    )


def run(checkout, python, model, epochs):
    """One worker run with ``checkout``'s d2lcore; its JSON, or None after printing the error."""
    sys.path.insert(0, str(ROOT))
    from booktools.kernels import kernel_env

    env = {**os.environ, **kernel_env("tensorflow"), "PYTHONPATH": str(checkout)}
    command = [python, __file__, "--worker", f"--model={model}", f"--epochs={epochs}"]
    done = subprocess.run(command, env=env, cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"== {checkout}: failed ==\n{done.stderr[-3000:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", help="the checkout to compare with (A)")
    parser.add_argument("--other-python", default=sys.executable)
    parser.add_argument("--model", choices=sorted(SIZES), default="transformer")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--worker", action="store_true")
    args = parser.parse_args()
    if args.epochs < 2:
        parser.error(
            f"--epochs must be at least 2 (the first epoch is reported apart); got {args.epochs}"
        )
    if args.worker:
        return worker(args.model, args.epochs)
    if args.other is None:
        parser.error("--other (the checkout to compare with) is required")
    sides = {"A": (Path(args.other).resolve(), args.other_python), "B": (ROOT, sys.executable)}
    results = {"A": [], "B": []}
    print(f"== {args.model}, {args.epochs} epochs: A = {sides['A'][0]}, B = {ROOT} ==", flush=True)
    for i in range(args.pairs):
        for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
            result = run(*sides[side], args.model, args.epochs)
            if result is None:
                return 1
            results[side].append(result)
            print(
                f"   {side}: first epoch {result['first_cpu']:.2f} s CPU ({result['first_wall']:.2f} s wall), "
                f"later epochs {result['epoch_cpu']:.3f} s CPU ({result['epoch_wall']:.3f} s wall); "
                f"loss {result['loss']}; load {result['load']:.2f}",
                flush=True,
            )
    for key in ("first_cpu", "epoch_cpu", "first_wall", "epoch_wall"):
        ratios = [a[key] / b[key] for a, b in zip(results["A"], results["B"], strict=True)]
        medians = [statistics.median(r[key] for r in results[s]) for s in "AB"]
        print(
            f"   {key}: A {medians[0]:.3f} s, B {medians[1]:.3f} s (medians); A / B median "
            f"{statistics.median(ratios):.2f} (from {min(ratios):.2f} to {max(ratios):.2f})"
        )
    same = {r["loss"] for r in results["A"] + results["B"]}
    print(f"   final losses: {'all the same' if len(same) == 1 else 'differ'}: {sorted(same)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
