"""The study of Where the Layer Norm Goes (chapters/attention/transformer-prenorm.md), over several
seeds and in every framework: post-norm without warmup, post-norm with warmup and pre-norm without
warmup, on the same budget.

Each run trains as the page's study does: the first 600 pairs of the project's corpus
(d2l.load_data_nmt(64, 10)), 2 blocks of 32 features, 4 heads, feed-forward networks of 64 hidden
units, dropout 0.1, 20 epochs, the peak learning rate 0.02; "post_norm" (d2l.TransformerEncoder and
d2l.TransformerDecoder) and "pre_norm" (d2l.PreNormTransformerEncoder and
d2l.PreNormTransformerDecoder) at that rate throughout, "post_norm_warmup" with
d2l.WarmupSchedule(32, 50) scaled so that its peak, at update 50, is 0.02. Each trained model
translates the held-out sentences greedily (d2l.evaluate_held_out): the mean per-sentence BLEU.

Each framework runs in a fresh process with the environment of the book's kernel
(benchmarks/seq2seq_run.py), seeded with d2l.set_seed(seed) before the model is built, as on the
page. The file it writes holds each run's final training loss per token, held-out BLEU, time and
load average, and per framework and recipe the mean, minimum and maximum over the seeds; it is
written again after every framework.

    .venv/bin/python benchmarks/transformer_practice.py                  # seeds 1 2 3, 3 frameworks
    nice -n 5 .venv/bin/python benchmarks/transformer_practice.py --frameworks pytorch
    .venv/bin/python benchmarks/transformer_practice.py --epochs 2 --seeds 1 --out /tmp/try.json

The page quotes the committed file (data/measurements/transformer_practice.json) through
d2lcore.measurements.practice_fields.
"""

import argparse
import contextlib
import datetime
import importlib
import io
import json
import math
import os
import time
from pathlib import Path

from seq2seq_run import ROOT, run_worker, study_head, write_study

from d2lcore import FRAMEWORKS, MODULE_OF, records
from d2lcore.measurements import PRACTICE_RECIPES, summarise_practice

OUT = ROOT / "data" / "measurements" / "transformer_practice.json"
SETTINGS = {
    "num_examples": 600,
    "batch_size": 64,
    "num_steps": 10,
    "num_hiddens": 32,
    "ffn_num_hiddens": 64,
    "num_heads": 4,
    "num_layers": 2,
    "dropout": 0.1,
    "peak_lr": 0.02,
    "warmup_steps": 50,
}


def train_and_evaluate(framework, recipe, seed, epochs):
    """One run in this process: the final training loss per token and the held-out mean BLEU."""
    d2l = importlib.import_module(MODULE_OF[framework])
    s = SETTINGS
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(s["batch_size"], s["num_steps"])
    d2l.set_seed(seed)
    pre = recipe == "pre_norm"
    encoder_class = d2l.PreNormTransformerEncoder if pre else d2l.TransformerEncoder
    decoder_class = d2l.PreNormTransformerDecoder if pre else d2l.TransformerDecoder
    args = (s["num_hiddens"], s["ffn_num_hiddens"], s["num_heads"], s["num_layers"], s["dropout"])
    net = d2l.EncoderDecoder(
        encoder_class(len(src_vocab), *args), decoder_class(len(tgt_vocab), *args)
    )
    device = d2l.try_gpu()
    lr, schedule = s["peak_lr"], None
    if recipe == "post_norm_warmup":
        lr = s["peak_lr"] * math.sqrt(s["num_hiddens"] * s["warmup_steps"])
        schedule = d2l.WarmupSchedule(s["num_hiddens"], s["warmup_steps"])
    load_before = os.getloadavg()
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), records.collect():
        losses = d2l.train_seq2seq(
            net, train_iter, lr, epochs, tgt_vocab, device, schedule=schedule
        )
        seconds = time.perf_counter() - start

        def translate(sentence):
            return d2l.predict_seq2seq(net, sentence, src_vocab, tgt_vocab, s["num_steps"], device)[
                0
            ]

        unseen = d2l.evaluate_held_out(translate, tgt_vocab, "held_out")
    return {
        "recipe": recipe,
        "seed": seed,
        "epochs": epochs,
        "loss_per_token": losses[-1],
        "held_out_bleu": sum(t.bleu for t in unseen) / len(unseen),
        "train_seconds": round(seconds, 1),
        "load_average": [round(x, 2) for x in (load_before[0], os.getloadavg()[0])],
    }


def worker(framework, seeds, epochs):
    runs = [
        train_and_evaluate(framework, recipe, seed, epochs)
        for seed in seeds
        for recipe in PRACTICE_RECIPES
    ]
    print(json.dumps(runs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", help="run one framework in this process (the worker)")
    parser.add_argument("--frameworks", nargs="+", default=list(FRAMEWORKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.framework:
        worker(args.framework, args.seeds, args.epochs)
        return
    what = (
        "Final training loss per token and held-out mean BLEU of post-norm without warmup, post-norm "
        "with warmup and pre-norm without warmup, over seeds; written by benchmarks/transformer_practice.py"
    )
    data = {
        **study_head(what, datetime.datetime.now(datetime.UTC)),
        "epochs": args.epochs,
        "seeds": args.seeds,
        "settings": SETTINGS,
        "runs": {},
    }
    for framework in args.frameworks:
        arguments = ["--seeds", *map(str, args.seeds), "--epochs", str(args.epochs)]
        runs = run_worker(__file__, framework, arguments)
        if runs is None:
            continue
        data["runs"][framework] = runs
        for run in runs:
            print(
                f"{framework:10} {run['recipe']:17} seed {run['seed']}: loss {run['loss_per_token']:.3f}, "
                f"held-out BLEU {run['held_out_bleu']:.3f}, {run['train_seconds']:.0f} s, "
                f"load {run['load_average']}",
                flush=True,
            )
        data["summary"] = summarise_practice(data)
        write_study(args.out, data)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
