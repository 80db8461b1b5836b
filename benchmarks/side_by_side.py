"""Ours against D2L's code, side by side: the training runs of Bahdanau Attention and The
Transformer in each framework, d2lcore's against benchmarks/reference/, a re-implementation of
the structure of D2L's training loops (same hyperparameters, same data, same number of epochs,
same seed).

Each run is a fresh Python process with the environment of the book's kernel for its
framework (booktools/kernels.py). Runs alternate, ours then D2L's code, then D2L's code then
ours, ... for --pairs pairs, so that a change of load hits both alike.
Prints, per model and framework: the throughput of each run (target tokens per second of
training, as train_seq2seq reports it), the ratio ours / D2L's code of each pair with its
median and spread, the final loss per token, the BLEU (k = 2) of the four test sentences,
on the 120 held-out pairs the mean BLEU (D2L's per-sentence variant) and the corpus BLEU and
chrF of sacreBLEU, and the load average.

    .venv/bin/python benchmarks/side_by_side.py                               # everything
    .venv/bin/python benchmarks/side_by_side.py --model bahdanau --framework pytorch
    .venv/bin/python benchmarks/side_by_side.py --framework tensorflow --epochs 10

D2L's eager TensorFlow takes about 20 minutes per full run on a 2-core CPU:
--tf-epochs (default 20) shortens the TensorFlow runs only, both sides alike.
"""

import argparse
import importlib
import json
import os
import statistics
import sys
import time

from seq2seq_run import EXAMPLES, SEED, load_text, run_worker

from d2lcore import FRAMEWORKS, MODULE_OF
from d2lcore.metrics import bleu, corpus_scores
from d2lcore.text import preprocess_nmt, tokenize_nmt

EPOCHS = {"bahdanau": 250, "transformer": 200}
SIZES = {  # the syllabus' hyperparameters (sections 1.4 and 1.7)
    "bahdanau": dict(embed_size=32, num_hiddens=32, num_layers=2, dropout=0.1),
    "transformer": dict(num_hiddens=32, ffn_num_hiddens=64, num_heads=4, num_layers=2, dropout=0.1),
}
BATCH_SIZE, NUM_STEPS, LR = 64, 10, 0.005
REFERENCE_MODULE = {
    "pytorch": "reference.in_pytorch",
    "tensorflow": "reference.in_tensorflow",
    "mxnet": "reference.in_mxnet",
}


def heldout_pairs(d2l):
    """{English sentence: [French references]} of the held-out corpus."""
    pairs = {}
    for src, tgt in zip(*tokenize_nmt(preprocess_nmt(d2l.read_data_nmt("heldout")))):
        pairs.setdefault(" ".join(src), []).append(" ".join(tgt))
    return pairs


def score(translate, d2l):
    """The four test translations with their BLEU; on the held-out pairs, the mean per-sentence
    BLEU against the best reference, and sacreBLEU's corpus BLEU and chrF (0 ... 100)."""
    tests = [(eng, t := translate(eng), bleu(t, fra, k=2)) for eng, fra in EXAMPLES]
    pairs = heldout_pairs(d2l)
    translations = [translate(eng) for eng in pairs]
    heldout = [
        max(bleu(t, ref, k=2) for ref in refs) for t, refs in zip(translations, pairs.values())
    ]
    corpus = corpus_scores(translations, list(pairs.values()))
    return {
        "translations": tests,
        "heldout_bleu": statistics.mean(heldout),
        "heldout_corpus_bleu": corpus["bleu"],
        "heldout_chrf": corpus["chrf"],
    }


def _ours(d2l, model, train_iter, src_vocab, tgt_vocab, epochs, device):
    from d2lcore import records

    s = SIZES[model]
    if model == "bahdanau":
        args = (s["embed_size"], s["num_hiddens"], s["num_layers"], s["dropout"])
        encoder = d2l.Seq2SeqEncoder(len(src_vocab), *args)
        decoder = d2l.Seq2SeqAttentionDecoder(len(tgt_vocab), *args)
    else:
        args = tuple(s.values())
        encoder = d2l.TransformerEncoder(len(src_vocab), *args)
        decoder = d2l.TransformerDecoder(len(tgt_vocab), *args)
    net = d2l.EncoderDecoder(encoder, decoder)
    with records.collect() as shown:
        losses = d2l.train_seq2seq(net, train_iter, LR, epochs, tgt_vocab, device)
    record = next(r for r in reversed(shown) if r.name == "training")

    def translate(eng):
        return d2l.predict_seq2seq(net, eng, src_vocab, tgt_vocab, NUM_STEPS, device)[0]

    figures = {"tokens_per_second": record["tokens_per_second"], "seconds": record["seconds"]}
    return figures | {"final_loss": losses[-1]}, translate


def _reference(d2l, model, train_iter, src_vocab, tgt_vocab, epochs, device, framework):
    ref = importlib.import_module(REFERENCE_MODULE[framework])
    build = ref.bahdanau_net if model == "bahdanau" else ref.transformer_net
    net = build(src_vocab, tgt_vocab, **SIZES[model])
    losses, tokens, seconds = ref.train_seq2seq(net, train_iter, LR, epochs, tgt_vocab, device)

    def translate(eng):
        return ref.predict_seq2seq(net, eng, src_vocab, tgt_vocab, NUM_STEPS, device)

    figures = {"tokens_per_second": tokens / seconds, "seconds": seconds}
    # The reference's loss is averaged over all num_steps steps: times NUM_STEPS, per token
    return figures | {"final_loss": losses[-1] * NUM_STEPS}, translate


class EpochClock:
    """Iterates over ``data`` and notes the time at the start of each pass (each epoch), so
    that the throughput after the first epoch (tracing, lazy building) can be computed for
    any training loop without touching it."""

    def __init__(self, data):
        self.data, self.starts = data, []

    def __iter__(self):
        self.starts.append(time.perf_counter())
        return iter(self.data)

    def steady(self, tokens, epochs, end):
        """Tokens per second from the second epoch to ``end`` (None for one epoch)."""
        if epochs < 2:
            return None
        return tokens * (epochs - 1) / epochs / (end - self.starts[1])


def run_one(side, model, framework, epochs, seed):
    """One training run and its translations, in this process; a dict of figures."""
    import contextlib
    import io

    d2l = importlib.import_module(MODULE_OF[framework])  # before the framework (MXNet)
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(BATCH_SIZE, NUM_STEPS)
    train_iter = EpochClock(train_iter)
    load_before = os.getloadavg()
    with contextlib.redirect_stdout(io.StringIO()):  # the training's plot and record
        if side == "ours":
            args = (d2l, model, train_iter, src_vocab, tgt_vocab, epochs, device)
            figures, translate = _ours(*args)
        else:
            args = (d2l, model, train_iter, src_vocab, tgt_vocab, epochs, device, framework)
            figures, translate = _reference(*args)
    end = time.perf_counter()
    tokens = figures["tokens_per_second"] * figures["seconds"]
    figures["steady_tokens_per_second"] = train_iter.steady(tokens, epochs, end)
    load_after = os.getloadavg()
    return (
        {"side": side, "epochs": epochs, "load": (load_before, load_after)}
        | figures
        | (score(translate, d2l))
    )


LABELS = {"ours": "ours", "reference": "D2L's code"}
"""How the printout names the two sides (benchmarks/reference/ holds D2L's training loops)."""


def compare(model, framework, epochs, pairs, seed, threads):
    """Run the pairs; print each run, then the ratios."""
    print(f"== {model}, {framework}: ours against D2L's code, {epochs} epochs ==", flush=True)
    runs = {"ours": [], "reference": []}
    for i in range(pairs):
        order = ("ours", "reference") if i % 2 == 0 else ("reference", "ours")
        for side in order:
            arguments = [
                f"--worker={side}",
                f"--model={model}",
                f"--epochs={epochs}",
                f"--seed={seed}",
            ]
            result = run_worker(__file__, framework, arguments, threads)
            if result is None:
                return None
            runs[side].append(result)
            tests = ", ".join(f"{t} ({b:.3f})" for _, t, b in result["translations"])
            steady = result["steady_tokens_per_second"]
            print(
                f"   {LABELS[side]:>10}: {result['tokens_per_second']:7.0f} tokens/s over the run "
                f"({result['seconds']:.1f} s), "
                f"{'-' if steady is None else f'{steady:.0f}'} after the first epoch; "
                f"loss per token {result['final_loss']:.3f}, "
                f"held-out BLEU {result['heldout_bleu']:.3f} (corpus BLEU "
                f"{result['heldout_corpus_bleu']:.1f}, chrF {result['heldout_chrf']:.1f}); {tests}; "
                f"load {load_text(*result['load'])}",
                flush=True,
            )
    summary = {"model": model, "framework": framework, "epochs": epochs, "pairs": pairs}
    for key, name in (("tokens_per_second", "run"), ("steady_tokens_per_second", "steady")):
        if runs["ours"][0][key] is None:
            continue
        ratios = [o[key] / r[key] for o, r in zip(runs["ours"], runs["reference"], strict=True)]
        summary[name] = ratios
        print(
            f"   ratio ours / D2L's code, {name}: median {statistics.median(ratios):.2f}x, "
            f"spread {min(ratios):.2f}-{max(ratios):.2f}x over {pairs} pairs "
            f"({', '.join(f'{r:.2f}' for r in ratios)})"
        )
    for side, rs in runs.items():
        lowest = min(min(b for *_, b in r["translations"]) for r in rs)
        heldout = statistics.median(r["heldout_bleu"] for r in rs)
        corpus = statistics.median(r["heldout_corpus_bleu"] for r in rs)
        chrf = statistics.median(r["heldout_chrf"] for r in rs)
        summary[side] = (lowest, heldout)
        print(
            f"   {side}: lowest test BLEU {lowest:.3f}, held-out (medians) BLEU {heldout:.3f}, "
            f"corpus BLEU {corpus:.1f}, chrF {chrf:.1f}"
        )
    sys.stdout.flush()
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=[*FRAMEWORKS, "all"], default="all")
    parser.add_argument("--model", choices=[*EPOCHS, "all"], default="all")
    parser.add_argument("--epochs", type=int, default=None, help="(default: the pages')")
    parser.add_argument("--tf-epochs", type=int, default=20, help="TensorFlow's epochs")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--threads", type=int, default=None, help="set OMP_NUM_THREADS")
    parser.add_argument("--worker", choices=["ours", "reference"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # a child process: one run, JSON on the last line
        result = run_one(args.worker, args.model, args.framework, args.epochs, args.seed)
        print(json.dumps(result))
        return
    start = time.perf_counter()
    models = list(EPOCHS) if args.model == "all" else [args.model]
    frameworks = FRAMEWORKS if args.framework == "all" else [args.framework]
    summaries = []
    for model in models:
        for framework in frameworks:
            epochs = args.epochs or EPOCHS[model]
            if framework == "tensorflow" and args.epochs is None:
                epochs = args.tf_epochs
            summary = compare(model, framework, epochs, args.pairs, args.seed, args.threads)
            if summary:
                summaries.append(summary)
    seconds, load = time.perf_counter() - start, "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"== summary ({seconds:.0f} s in all; load average now {load}) ==")
    for s in summaries:
        ratios = "; ".join(
            f"{name} {statistics.median(s[name]):.2f}x ({min(s[name]):.2f}-{max(s[name]):.2f})"
            for name in ("run", "steady")
            if name in s
        )
        print(
            f"   {s['model']:>11} {s['framework']:>10} ({s['epochs']} epochs, {s['pairs']} pairs): "
            f"ours / D2L's code {ratios}; lowest test BLEU ours {s['ours'][0]:.3f}, "
            f"D2L's code {s['reference'][0]:.3f}; held-out BLEU ours {s['ours'][1]:.3f}, "
            f"D2L's code {s['reference'][1]:.3f}"
        )


if __name__ == "__main__":
    main()
