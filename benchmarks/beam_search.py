"""Greedy decoding against beam search, measured: held-out BLEU, chrF and time per sentence of the Transformer of
the beam-search page, for each framework, over several seeds.

Each run trains the model as chapters/attention/beam-search.md does (the Transformer page's model: 32 features,
2 blocks, 4 heads, feed-forward networks of 64, dropout 0.1, minibatches of 64 pairs of 10 steps, Adam with
learning rate 0.005, EPOCHS epochs on the first 600 pairs), seeded with d2l.set_seed(seed) before the model is
built, in a fresh process with the environment of the book's kernel (benchmarks/seq2seq_run.py). Then it
translates the held-out sentences with every decoder of DECODERS:

- ``greedy``: d2l.predict_seq2seq, one sentence at a time, as the toolkit translates;
- ``beam_<k>``: d2l.beam_search with a beam of k and the length normalisation alpha = 0.6, all the held-out
  sentences in one batch (``beam_1`` is greedy decoding too, batched);
- ``beam_4_alpha_0``: a beam of 4 without length normalisation (alpha = 0).

and scores each (d2l.translate_corpus against every reference: mean per-sentence BLEU with k = 2, the share of
exact translations, corpus BLEU and chrF from sacreBLEU) with the seconds per sentence (the decoding's wall time
over the number of sentences; in TensorFlow the first call of each shape includes the tracing of its graphs,
which the first batched decoder, beam_1, pays) and the mean length of the outputs in tokens. The file holds
every run, with its load average, and per framework, decoder and measure the mean, standard deviation, minimum
and maximum over the seeds; it is written again after every run.

    nice -n 5 .venv/bin/python benchmarks/beam_search.py                 # seeds 1 2 3, every framework
    .venv/bin/python benchmarks/beam_search.py --frameworks pytorch --seeds 1 --epochs 5 --out /tmp/try.json

The page shows the committed file (data/measurements/beam_search.json) with
d2lcore.measurements.show_beam_search.
"""

import argparse
import datetime
import importlib
import json
import time
from pathlib import Path

from seq2seq_run import ROOT, run_worker, study_head, write_study

from d2lcore import FRAMEWORKS, MODULE_OF, records
from d2lcore.measurements import BEAM_DECODERS, BEAM_MEASURES, summarise_beam_search

OUT = ROOT / "data" / "measurements" / "beam_search.json"
EPOCHS = 100
SETTINGS = {
    "num_examples": 600,
    "batch_size": 64,
    "num_steps": 10,
    "num_hiddens": 32,
    "num_layers": 2,
    "dropout": 0.1,
    "ffn_num_hiddens": 64,
    "num_heads": 4,
    "lr": 0.005,
    "alpha": 0.6,
}


def train_and_decode(framework, seed, epochs):
    """One run in this process: train the page's Transformer, decode the held-out sentences with every decoder;
    returns the run's figures."""
    from d2lcore.metrics import corpus_scores

    d2l = importlib.import_module(MODULE_OF[framework])
    s = SETTINGS
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(s["batch_size"], s["num_steps"])
    sizes = (s["num_hiddens"], s["ffn_num_hiddens"], s["num_heads"], s["num_layers"], s["dropout"])
    net = d2l.EncoderDecoder(
        d2l.TransformerEncoder(len(src_vocab), *sizes),
        d2l.TransformerDecoder(len(tgt_vocab), *sizes),
    )
    load_before = records.load_average()
    start = time.perf_counter()
    with records.collect() as shown:
        losses = d2l.train_seq2seq(net, train_iter, s["lr"], epochs, tgt_vocab, device)
    train_seconds = time.perf_counter() - start
    training = next(r for r in reversed(shown) if r.name == "training")

    text = d2l.read_data_nmt("heldout")
    sources = [t.source for t in d2l.translate_corpus(lambda x: x, text)]
    scores = {}
    for decoder in BEAM_DECODERS:
        start = time.perf_counter()
        if decoder == "greedy":
            outputs = [
                d2l.predict_seq2seq(net, x, src_vocab, tgt_vocab, s["num_steps"], device)[0]
                for x in sources
            ]
        else:
            parts = decoder.split("_")  # beam_<k> or beam_<k>_alpha_0
            alpha = 0.0 if "alpha" in parts else s["alpha"]
            best = d2l.beam_search(
                net, sources, src_vocab, tgt_vocab, s["num_steps"], device, int(parts[1]), alpha
            )
            outputs = [translation for translation, _ in best]
        seconds = time.perf_counter() - start
        output_of = dict(zip(sources, outputs))
        results = d2l.translate_corpus(output_of.__getitem__, text)
        corpus = corpus_scores([r.output for r in results], [list(r.references) for r in results])
        scores[decoder] = {
            "bleu": sum(r.bleu for r in results) / len(results),
            "exact": sum(r.bleu == 1 for r in results) / len(results),
            "corpus_bleu": corpus["bleu"],
            "chrf": corpus["chrf"],
            "ms_per_sentence": 1000 * seconds / len(sources),
            "tokens": sum(len(r.output.split()) for r in results) / len(results),
        }
    return {
        "framework": framework,
        "seed": seed,
        "epochs": epochs,
        "device": training["device"],
        "sentences": len(sources),
        "train_seconds": round(train_seconds, 1),
        "loss_per_token": losses[-1],
        "load_average": [load_before, records.load_average()],
        "scores": scores,
    }


def write(out, args, runs, started):
    what = (
        "Held-out translation quality and decoding time of the beam-search page's Transformer: greedy "
        "decoding against beam search, per framework, over seeds; written by benchmarks/beam_search.py"
    )
    data = {
        **study_head(what, started),
        "device": runs[0]["device"],
        "epochs": args.epochs,
        "seeds": sorted({r["seed"] for r in runs}),
        "frameworks": [f for f in FRAMEWORKS if any(r["framework"] == f for r in runs)],
        "settings": SETTINGS,
        "decoders": list(BEAM_DECODERS),
        "measures": list(BEAM_MEASURES),
        "runs": runs,
    }
    data["summary"] = summarise_beam_search(data)
    write_study(out, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frameworks", choices=FRAMEWORKS, nargs="+", default=list(FRAMEWORKS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--framework", choices=FRAMEWORKS, help=argparse.SUPPRESS)  # the worker's
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the child process: one run, its result as JSON on the last line
        print(json.dumps(train_and_decode(args.framework, args.seed, args.epochs)))
        return
    started = datetime.datetime.now(datetime.UTC)
    clock = time.perf_counter()
    runs = []
    for seed in args.seeds:
        for framework in args.frameworks:
            arguments = ["--worker", f"--seed={seed}", f"--epochs={args.epochs}"]
            result = run_worker(__file__, framework, arguments)
            if result is None:
                raise SystemExit(f"the run of {framework}, seed {seed}, failed")
            runs.append(result)
            line = ", ".join(
                f"{d} {v['corpus_bleu']:.1f}/{v['chrf']:.1f}/{v['ms_per_sentence']:.1f} ms"
                for d, v in result["scores"].items()
            )
            print(
                f"{framework} seed {seed}: loss {result['loss_per_token']:.3f}, {result['train_seconds']:.0f} s "
                f"(load {result['load_average']}); corpus BLEU/chrF/time: {line}",
                flush=True,
            )
            write(args.out, args, runs, started)
    print(f"{args.out}: {len(runs)} runs in {time.perf_counter() - clock:.0f} s")


if __name__ == "__main__":
    main()
