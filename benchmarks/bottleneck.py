"""The bottleneck, measured: translation quality by the length of the English source, for the plain
encoder–decoder (no attention) and for the one with Bahdanau attention, over several seeds.

Both models are trained as the Bahdanau page trains its model: the first 600 pairs of the project's
corpus (d2l.load_data_nmt(64, 10)), embeddings of 32, 32 hidden units, 2 GRU layers, dropout 0.1,
Adam with learning rate 0.005, 250 epochs. "plain" is d2l.Seq2SeqEncoder with d2l.Seq2SeqDecoder (one
context, the encoder's final state, at every step), "attention" the same encoder with
d2l.Seq2SeqAttentionDecoder. Each run is a fresh process with the environment of the book's kernel
(benchmarks/seq2seq_run.py), seeded with d2l.set_seed(seed) before the model is built, as on the page.

Each trained model translates every English sentence of the 600 training pairs and of the held-out
file (d2l.translate_corpus); the sentences are grouped by their length in words (punctuation not
counted) into the buckets of BUCKETS, and each group is scored: mean per-sentence BLEU (k = 2, the
page's measure), the share translated exactly, corpus BLEU and chrF (d2l.corpus_scores). The file it
writes holds each run's figures (with its time, final loss and load average) and, per model, split,
bucket and measure, the mean, standard deviation, minimum and maximum over the seeds; it is written
again after every seed, so a run stopped early leaves the seeds it finished.

It also says where and how busy: ``machine`` (cores, processor model, memory, operating system,
Python and framework versions, threads per operation) and ``load``, the machine's load average
(os.getloadavg: 1, 5 and 15 minutes) when the benchmark started and when the file was written, and
the 1-minute load sampled every LOAD_INTERVAL seconds while it ran (count, minimum, mean, maximum);
each run carries its own samples' summary too (``load_samples``). A load above the number of cores
means that other programs shared the CPU, and the times are longer than on an idle machine; the
scores do not depend on it (one thread per operation, fixed seeds).

    .venv/bin/python benchmarks/bottleneck.py                          # seeds 1 2 3, PyTorch
    nice .venv/bin/python benchmarks/bottleneck.py --seeds 1 2 3 4 5
    .venv/bin/python benchmarks/bottleneck.py --epochs 5 --seeds 1 --out /tmp/try.json

The book draws the committed file (data/measurements/bottleneck.json) with d2l.show_bottleneck.
"""

import argparse
import contextlib
import datetime
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import threading
import time
from pathlib import Path

from seq2seq_run import ROOT, run_worker, study_head, write_study

from d2lcore import FRAMEWORKS, MODULE_OF, records
from d2lcore.measurements import BUCKETS, MEASURES, MODELS, SPLITS, bucket_of, summarise
from d2lcore.threads import cpu_threads

OUT = ROOT / "data" / "measurements" / "bottleneck.json"
LOAD_INTERVAL = 15
"""Seconds between two samples of the load average while the benchmark runs."""
SETTINGS = {
    "num_examples": 600,
    "batch_size": 64,
    "num_steps": 10,
    "embed_size": 32,
    "num_hiddens": 32,
    "num_layers": 2,
    "dropout": 0.1,
    "lr": 0.005,
}


def _load():
    """The load average over 1, 5 and 15 minutes, rounded to 2 decimals."""
    return [round(x, 2) for x in os.getloadavg()]


class LoadSampler:
    """Samples the 1-minute load average every ``interval`` seconds in a background thread, from
    its creation until :meth:`stop`; ``summary(start)`` summarises the samples from index ``start``."""

    def __init__(self, interval=LOAD_INTERVAL):
        self.before = _load()
        self.interval = interval
        self.samples = [self.before[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self.interval):
            self.samples.append(os.getloadavg()[0])

    def stop(self):
        self._stop.set()
        self._thread.join()

    def summary(self, start=0):
        values = self.samples[start:] or self.samples[-1:]
        return {
            "interval_seconds": self.interval,
            "count": len(values),
            "min": round(min(values), 2),
            "mean": round(statistics.fmean(values), 2),
            "max": round(max(values), 2),
        }


def machine(framework):
    """Where the benchmark ran: cores, processor model, memory, system, Python and framework
    versions, and the threads per operation that d2lcore gives the framework."""
    model = platform.processor() or platform.machine()
    memory = None
    with contextlib.suppress(OSError):
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in cpuinfo.splitlines()
                if line.startswith("model name")
            ),
            model,
        )
        meminfo = Path("/proc/meminfo").read_text(encoding="utf-8")
        kib = int(meminfo.split("MemTotal:", 1)[1].split()[0])
        memory = round(kib / 2**20, 1)
    package = {"pytorch": "torch", "mxnet": "mxnet", "tensorflow": "tensorflow"}[framework]
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {
        "cores": os.cpu_count(),
        "processor": model,
        "memory_gib": memory,
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "framework_version": f"{package} {version}",
        "threads_per_operation": cpu_threads(),
    }


def train_and_translate(framework, model, seed, epochs):
    """One run in this process: train ``model`` ("plain" or "attention") and translate both splits.
    Returns the run's figures and, per split, the list of (source, output, bleu, references)."""
    d2l = importlib.import_module(MODULE_OF[framework])
    s = SETTINGS
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(s["batch_size"], s["num_steps"])
    Decoder = d2l.Seq2SeqAttentionDecoder if model == "attention" else d2l.Seq2SeqDecoder
    sizes = (s["embed_size"], s["num_hiddens"], s["num_layers"], s["dropout"])
    net = d2l.EncoderDecoder(
        d2l.Seq2SeqEncoder(len(src_vocab), *sizes), Decoder(len(tgt_vocab), *sizes)
    )
    load_before = records.load_average()
    start = time.perf_counter()
    with records.collect() as shown:
        losses = d2l.train_seq2seq(net, train_iter, s["lr"], epochs, tgt_vocab, device)
    seconds = time.perf_counter() - start

    def translate(sentence):
        return d2l.predict_seq2seq(net, sentence, src_vocab, tgt_vocab, s["num_steps"], device)[0]

    corpora = {
        "training": (d2l.read_data_nmt(), s["num_examples"]),
        "held_out": (d2l.read_data_nmt("heldout"), None),
    }
    translations = {}
    for split, (text, num_examples) in corpora.items():
        translations[split] = [
            (t.source, t.output, t.bleu, list(t.references))
            for t in d2l.translate_corpus(translate, text, num_examples)
        ]
    training = next(r for r in reversed(shown) if r.name == "training")
    return {
        "model": model,
        "seed": seed,
        "epochs": epochs,
        "device": training["device"],
        "train_seconds": round(seconds, 1),
        "evaluate_seconds": round(time.perf_counter() - start - seconds, 1),
        "loss_per_token": losses[-1],
        "load_average": [load_before, records.load_average()],
        "translations": translations,
    }


def scores(translations):
    """{bucket: {measure: value, "sentences": n}} of one split's translations, "all" included."""
    from d2lcore.metrics import corpus_scores

    groups = {"all": translations}
    for key in BUCKETS:
        groups[key] = [t for t in translations if bucket_of(t[0]) == key]
    result = {}
    for key, group in groups.items():
        if not group:
            continue
        corpus = corpus_scores([t[1] for t in group], [t[3] for t in group])
        result[key] = {
            "sentences": len(group),
            "bleu": statistics.fmean(t[2] for t in group),
            "exact": statistics.fmean(t[2] == 1 for t in group),
            "corpus_bleu": corpus["bleu"],
            "chrf": corpus["chrf"],
        }
    return result


def write(out, args, runs, started, sampler):
    """The measurement file: settings, machine, load, every run's figures and the summary over
    seeds."""
    first = runs[0]
    what = (
        "Translation quality by English source length (words), without attention (plain) and "
        "with Bahdanau attention, over seeds; written by benchmarks/bottleneck.py"
    )
    data = {
        **study_head(what, started),
        "framework": args.framework,
        "device": first["device"],
        "machine": machine(args.framework),  # with the versions the page names
        "load": {
            "before": sampler.before,
            "after": _load(),
            "sampled": sampler.summary(),
        },
        "epochs": args.epochs,
        "seeds": sorted({r["seed"] for r in runs}),
        "settings": SETTINGS,
        "buckets": BUCKETS,
        "measures": MEASURES,
        "runs": runs,
    }
    data["summary"] = summarise(data)
    write_study(out, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=FRAMEWORKS, default="pytorch")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=250)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)  # the worker's
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the child process: one run, its result as JSON on the last line
        result = train_and_translate(args.framework, args.model, args.seed, args.epochs)
        print(json.dumps(result))
        return
    started = datetime.datetime.now(datetime.UTC)
    clock = time.perf_counter()
    sampler = LoadSampler()
    runs = []
    for seed in args.seeds:
        for model in MODELS:
            arguments = [
                "--worker",
                f"--model={model}",
                f"--seed={seed}",
                f"--epochs={args.epochs}",
            ]
            first_sample = len(sampler.samples)
            result = run_worker(__file__, args.framework, arguments)
            if result is None:
                raise SystemExit(f"the run of {model}, seed {seed}, failed")
            result["load_samples"] = sampler.summary(first_sample)
            translations = result.pop("translations")
            result["scores"] = {split: scores(translations[split]) for split in SPLITS}
            runs.append(result)
            held_out = result["scores"]["held_out"]["all"]
            print(
                f"seed {seed}, {model:>9}: loss per token {result['loss_per_token']:.3f}, "
                f"{result['train_seconds']:.0f} s (load {result['load_average']}); held-out mean "
                f"BLEU {held_out['bleu']:.3f}, corpus BLEU {held_out['corpus_bleu']:.1f}, "
                f"chrF {held_out['chrf']:.1f}",
                flush=True,
            )
        write(args.out, args, runs, started, sampler)
    sampler.stop()
    print(f"load average sampled: {sampler.summary()}")
    print(f"{args.out}: {len(runs)} runs in {time.perf_counter() - clock:.0f} s")


if __name__ == "__main__":
    main()
