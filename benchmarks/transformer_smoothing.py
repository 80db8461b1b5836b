"""Label smoothing and weight tying, measured: the Transformer of the training page trained with and without each,
over several seeds, in each framework.

Every run trains as the page "Training and Evaluating the Transformer" does (the first 600 pairs of the project's
corpus, d2l.load_data_nmt(64, 10); 32 features, 2 blocks, 4 heads, feed-forward networks of 64, dropout 0.1; Adam
with learning rate 0.005), for 50 epochs (as the page's demo; the training page trains 200), in one of the
CONFIGS:

- "baseline": d2l.TransformerDecoder and the plain loss (d2l.MaskedSoftmaxCELoss), the page's model;
- "smoothing": the same model trained with d2l.LabelSmoothedCELoss(0.1);
- "tied": d2l.TiedTransformerDecoder (output layer and target embedding share one matrix), the plain loss;
- "both": d2l.TiedTransformerDecoder trained with d2l.LabelSmoothedCELoss(0.1).

Each run is a fresh process with the environment of the book's kernel (benchmarks/seq2seq_run.py), seeded with
d2l.set_seed(seed) before the model is built. The trained model translates the 120 held-out sentences greedily
(mean per-sentence BLEU, exact share, corpus BLEU and chrF, as d2l.evaluate_held_out); then, teacher-forced on the
held-out pairs and on the 600 training pairs, its predicted distributions at every target token are summarised
(confidence): the mean probability of the most probable token, the mean entropy (nats), the mean -log probability
of the reference token (nats) and the share of tokens whose most probable token is the reference one. The file
holds every run (with its time, load average and number of parameters) and, per framework and config, the mean,
standard deviation, minimum and maximum over the seeds; it is written again after every run.

    nice -n 5 .venv/bin/python benchmarks/transformer_smoothing.py                   # all, seeds 1 2 3
    .venv/bin/python benchmarks/transformer_smoothing.py --frameworks pytorch --epochs 5 --seeds 1 --out /tmp/t.json

d2l.show_smoothing_study(framework) draws the committed file (data/measurements/transformer_smoothing.json) and shows
it as a record. The committed file is incomplete (seed 1 of baseline and smoothing in the three frameworks;
the runs of tied and of seeds 2 and 3 did not finish on a busy machine), so the page "Label Smoothing and Weight Tying"
does not quote it yet; merge a full run's files with --merge and show it there.
"""

import argparse
import datetime
import importlib
import json
import time
from pathlib import Path

import numpy
from seq2seq_run import ROOT, run_worker, study_head, write_study

from d2lcore import FRAMEWORKS, MODULE_OF, records
from d2lcore.measurements import SMOOTHING_CONFIGS, summarise_smoothing

OUT = ROOT / "data" / "measurements" / "transformer_smoothing.json"
SETTINGS = {
    "num_examples": 600,
    "batch_size": 64,
    "num_steps": 10,
    "num_hiddens": 32,
    "num_layers": 2,
    "num_heads": 4,
    "ffn_num_hiddens": 64,
    "dropout": 0.1,
    "lr": 0.005,
    "smoothing": 0.1,
}


def confidence(probs, labels, valid_len):
    """The summary of predicted distributions over the valid tokens: probs (n, steps, vocab), labels (n, steps),
    valid_len (n,) -> {"max_prob", "entropy", "nll", "accuracy"} (means over the valid tokens)."""
    valid = numpy.arange(labels.shape[1])[None, :] < valid_len[:, None]
    p = probs[valid]  # (tokens, vocab)
    y = labels[valid]
    picked = p[numpy.arange(len(y)), y]
    return {
        "max_prob": float(p.max(axis=-1).mean()),
        "entropy": float(-(p * numpy.log(numpy.maximum(p, 1e-30))).sum(axis=-1).mean()),
        "nll": float(-numpy.log(numpy.maximum(picked, 1e-30)).mean()),
        "accuracy": float((p.argmax(axis=-1) == y).mean()),
    }


def teacher_forced_probs(framework, d2l, net, arrays, bos, device):
    """The model's softmax at every target position of ``arrays`` (X, X_valid_len, Y, Y_valid_len: NumPy),
    teacher-forced, in inference mode: (n, steps, vocab) NumPy."""
    X, X_len, Y, _ = arrays
    dec = numpy.concatenate((numpy.full((len(Y), 1), bos, Y.dtype), Y[:, :-1]), axis=1)
    if framework == "pytorch":
        import torch

        net.eval()
        with torch.no_grad():
            logits = net(*(torch.tensor(a, device=device) for a in (X, dec, X_len)))[0]
        return torch.softmax(logits, -1).cpu().numpy()
    if framework == "mxnet":
        from mxnet import np, npx

        logits = net(*(np.array(a, dtype="int32", ctx=device) for a in (X, dec, X_len)))[0]
        return npx.softmax(logits, axis=-1).asnumpy()
    import tensorflow as tf

    with tf.device(device.name):
        logits = net(*(tf.constant(a) for a in (X, dec, X_len)), training=False)[0]
        return tf.nn.softmax(logits, -1).numpy()


def parameters(framework, net):
    """The number of distinct trainable numbers of ``net`` (a shared tensor counted once)."""
    if framework == "pytorch":
        return sum(p.numel() for p in net.parameters())
    if framework == "mxnet":
        unique = {id(p): p for p in net.collect_params().values()}
        return sum(int(numpy.prod(p.shape)) for p in unique.values())
    unique = {id(v): v for v in net.trainable_variables}
    return sum(int(numpy.prod(v.shape)) for v in unique.values())


def train_and_measure(framework, config, seed, epochs):
    """One run in this process: train ``config`` with ``seed``; returns its figures."""
    from d2lcore.text import build_array_nmt, nmt_arrays, preprocess_nmt, tokenize_nmt

    d2l = importlib.import_module(MODULE_OF[framework])
    s = SETTINGS
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(s["batch_size"], s["num_steps"])
    sizes = (s["num_hiddens"], s["ffn_num_hiddens"], s["num_heads"], s["num_layers"], s["dropout"])
    Decoder = d2l.TiedTransformerDecoder if config in ("tied", "both") else d2l.TransformerDecoder
    net = d2l.EncoderDecoder(
        d2l.TransformerEncoder(len(src_vocab), *sizes), Decoder(len(tgt_vocab), *sizes)
    )
    smoothed = config in ("smoothing", "both")
    loss_fn = d2l.LabelSmoothedCELoss(s["smoothing"]) if smoothed else None
    load_before = records.load_average()
    start = time.perf_counter()
    with records.collect() as shown:
        losses = d2l.train_seq2seq(
            net, train_iter, s["lr"], epochs, tgt_vocab, device, loss_fn=loss_fn
        )
    seconds = time.perf_counter() - start
    load_after = records.load_average()

    def translate(sentence):
        return d2l.predict_seq2seq(net, sentence, src_vocab, tgt_vocab, s["num_steps"], device)[0]

    with records.collect() as scored:
        d2l.evaluate_held_out(translate, tgt_vocab, "held_out")
    held_out = dict(scored[-1])
    pairs = {"training": nmt_arrays(s["num_steps"], s["num_examples"])[0]}
    source, target = tokenize_nmt(preprocess_nmt(d2l.read_data_nmt("heldout")))
    pairs["held_out"] = (
        *build_array_nmt(source, src_vocab, s["num_steps"]),
        *build_array_nmt(target, tgt_vocab, s["num_steps"]),
    )
    confidences = {}
    for split, arrays in pairs.items():
        probs = teacher_forced_probs(framework, d2l, net, arrays, tgt_vocab["<bos>"], device)
        confidences[split] = confidence(probs, arrays[2], arrays[3])
    training = next(r for r in reversed(shown) if r.name == "training")
    return {
        "config": config,
        "seed": seed,
        "epochs": epochs,
        "device": training["device"],
        "train_seconds": round(seconds, 1),
        "loss_per_token": losses[-1],
        "load_average": [load_before, load_after],
        "parameters": parameters(framework, net),
        "held_out": {k: held_out[k] for k in ("bleu", "exact", "corpus_bleu", "chrf")},
        "confidence": confidences,
    }


def write(out, args, runs, started):
    """The measurement file: settings, machine, every run's figures and the summary over seeds."""
    what = (
        "The Transformer of the training page with and without label smoothing (0.1) and weight tying, "
        "over seeds, per framework; written by benchmarks/transformer_smoothing.py"
    )
    data = {
        **study_head(what, started),
        "epochs": args.epochs,
        "seeds": sorted({r["seed"] for r in runs}),
        "configs": list(args.configs),
        "settings": SETTINGS,
        "runs": runs,
    }
    data["summary"] = summarise_smoothing(data)
    write_study(out, data)


def merge(files, out):
    """One measurement file from several, each written by this script with the same settings and epochs: their
    runs, the load average and date of each, and the summary over all of them."""
    parts = [json.loads(Path(f).read_text(encoding="utf-8")) for f in files]
    first = parts[0]
    for part in parts[1:]:
        if part["settings"] != first["settings"] or part["epochs"] != first["epochs"]:
            raise SystemExit(f"cannot merge runs of other settings or epochs: {part['command']}")
    runs = [run for part in parts for run in part["runs"]]
    data = dict(first)
    data["command"] = " + ".join(part["command"] for part in parts)
    data["date"] = max(part["date"] for part in parts)
    data["seeds"] = sorted({r["seed"] for r in runs})
    data["configs"] = [c for c in SMOOTHING_CONFIGS if any(r["config"] == c for r in runs)]
    data["runs"] = runs
    data["summary"] = summarise_smoothing(data)
    write_study(out, data)
    print(f"{out}: {len(runs)} runs from {len(parts)} files")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frameworks", choices=FRAMEWORKS, nargs="+", default=list(FRAMEWORKS))
    parser.add_argument(
        "--configs", choices=SMOOTHING_CONFIGS, nargs="+", default=list(SMOOTHING_CONFIGS)
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        help="files of this script to merge into --out (runs made in parallel)",
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, help=argparse.SUPPRESS)  # the worker's
    parser.add_argument("--config", choices=SMOOTHING_CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the child process: one run, its result as JSON on the last line
        print(json.dumps(train_and_measure(args.framework, args.config, args.seed, args.epochs)))
        return
    if args.merge:
        merge(args.merge, args.out)
        return
    started = datetime.datetime.now(datetime.UTC)
    clock = time.perf_counter()
    runs = []
    for seed in args.seeds:  # a run stopped early leaves whole seeds of every framework
        for framework in args.frameworks:
            for config in args.configs:
                arguments = [
                    "--worker",
                    f"--config={config}",
                    f"--seed={seed}",
                    f"--epochs={args.epochs}",
                ]
                result = run_worker(__file__, framework, arguments)
                if result is None:
                    raise SystemExit(f"the run of {framework}, {config}, seed {seed}, failed")
                result["framework"] = framework
                runs.append(result)
                held, conf = result["held_out"], result["confidence"]["held_out"]
                print(
                    f"{framework} seed {seed} {config:>9}: {result['train_seconds']:.0f} s "
                    f"(load {result['load_average']}), {result['parameters']} parameters; held-out BLEU "
                    f"{held['bleu']:.3f}, chrF {held['chrf']:.1f}; max prob {conf['max_prob']:.3f}, "
                    f"entropy {conf['entropy']:.3f}, NLL {conf['nll']:.3f}",
                    flush=True,
                )
                write(args.out, args, runs, started)
    print(f"{args.out}: {len(runs)} runs in {time.perf_counter() - clock:.0f} s")


if __name__ == "__main__":
    main()
