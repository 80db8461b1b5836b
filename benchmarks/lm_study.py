"""Decoder-only or encoder–decoder, measured: the encoder–decoder Transformer of the training page and the prefix
language model of the page "Decoder-Only Models, the Key–Value Cache and Rotary Embeddings", with rotary
embeddings and with the sinusoidal encoding, trained on the same corpus for the same epochs over several seeds, in
each framework. The page "Translating with a Decoder-Only Model" trains the prefix model the same way and quotes
the results.

CONFIGS, all of 2 blocks of 32 features, 4 heads, feed-forward networks of 64, dropout 0.1, Adam at 0.005, batches
of 64, on the first 600 pairs of the project's corpus with sources and targets padded to 10 tokens:

- "encoder_decoder": d2l.TransformerEncoder and d2l.TransformerDecoder in d2l.EncoderDecoder, trained by
  d2l.train_seq2seq, translating greedily by d2l.predict_seq2seq (the training page's model);
- "prefix_rotary": d2l.PrefixLM over "source, separator, target" rows in one joint vocabulary (the translation
  page's rows, loss and training loop), rotary embeddings in every attention, translating with d2l.generate;
- "prefix_sinusoidal": the same with rotary=False: the sinusoidal encoding added to the scaled embeddings.

Each run is a fresh process with the environment of the book's kernel (benchmarks/seq2seq_run.py), seeded with
d2l.set_seed(seed) before the model is built. It records the number of parameters, the training time, the load
average before and after training, the held-out scores of d2l.evaluate_held_out (mean per-sentence BLEU, exact
share, corpus BLEU, chrF; 120 held-out sentences) and the same scores on LONGER sources: the held-out corpus has no
source longer than the training ones (both at most 5 tokens), so each distinct held-out source i of the first half
is joined with source i of the second half ("go . i lost ."), its references being the joined references; these
sources have 6 to 10 tokens, longer than any training source. The prefix LMs read them padded to 20 tokens (the
separator at position 20, the target from 21 on: positions beyond every training row's 21) and the encoder–decoder
with num_steps 20; both may write 20 target tokens. The file holds every run and, per framework and config, the
mean, standard deviation, minimum and maximum over the seeds; it is written again after every run.

    nice -n 5 .venv/bin/python benchmarks/lm_study.py                                  # all, seeds 1 2 3
    .venv/bin/python benchmarks/lm_study.py --epochs 1 --seeds 1 --frameworks pytorch --out /tmp/lm_study_smoke.json

d2lcore.measurements.lm_study_fields reads the file (data/measurements/lm_study.json) into record fields.
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
from d2lcore.measurements import LM_STUDY_CONFIGS, summarise_lm_study

OUT = ROOT / "data" / "measurements" / "lm_study.json"
SETTINGS = {
    "num_examples": 600,
    "batch_size": 64,
    "num_steps": 10,
    "long_steps": 20,
    "num_hiddens": 32,
    "num_layers": 2,
    "num_heads": 4,
    "ffn_num_hiddens": 64,
    "dropout": 0.1,
    "lr": 0.005,
}


def parameters(framework, net):
    """The number of distinct trainable numbers of ``net`` (a shared tensor counted once)."""
    if framework == "pytorch":
        return sum(p.numel() for p in net.parameters())
    if framework == "mxnet":
        unique = {id(p): p for p in net.collect_params().values()}
        return sum(int(numpy.prod(p.shape)) for p in unique.values())
    unique = {id(v): v for v in net.trainable_variables}
    return sum(int(numpy.prod(v.shape)) for v in unique.values())


def long_pairs():
    """The joined held-out pairs: [(source, [references])], each source of 6 to 10 tokens."""
    from d2lcore.datasets import read_data_nmt
    from d2lcore.text import preprocess_nmt, tokenize_nmt

    references = {}
    for src, tgt in zip(*tokenize_nmt(preprocess_nmt(read_data_nmt("heldout")))):
        references.setdefault(" ".join(src), []).append(" ".join(tgt))
    sources = list(references)
    half = len(sources) // 2
    pairs = []
    for a, b in zip(sources[:half], sources[half : 2 * half]):
        refs = [f"{ra} {rb}" for ra in references[a] for rb in references[b]]
        pairs.append((f"{a} {b}", refs))
    return pairs


def score_long(translate, pairs):
    """Mean per-sentence BLEU (k = 2, best reference), exact share, corpus BLEU and chrF of ``translate`` (a
    function of a list of sources -> their translations) on ``pairs``; plus the source lengths in tokens."""
    from d2lcore.metrics import bleu, corpus_scores

    outputs = translate([source for source, _ in pairs])
    scores = [max(bleu(o, r, k=2) for r in refs) for o, (_, refs) in zip(outputs, pairs)]
    corpus = corpus_scores(outputs, [refs for _, refs in pairs])
    lengths = [len(source.split()) for source, _ in pairs]
    return {
        "sentences": len(pairs),
        "bleu": sum(scores) / len(scores),
        "exact": sum(s == 1 for s in scores) / len(scores),
        "corpus_bleu": corpus["bleu"],
        "chrf": corpus["chrf"],
        "source_tokens": [min(lengths), max(lengths)],
        "examples": [[s, o] for (s, _), o in list(zip(pairs, outputs))[:3]],
    }


def train_encoder_decoder(framework, d2l, epochs):
    s = SETTINGS
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(s["batch_size"], s["num_steps"])
    sizes = (s["num_hiddens"], s["ffn_num_hiddens"], s["num_heads"], s["num_layers"], s["dropout"])
    net = d2l.EncoderDecoder(
        d2l.TransformerEncoder(len(src_vocab), *sizes),
        d2l.TransformerDecoder(len(tgt_vocab), *sizes),
    )
    start = time.perf_counter()
    with records.collect():
        losses = d2l.train_seq2seq(net, train_iter, s["lr"], epochs, tgt_vocab, device)
    seconds = time.perf_counter() - start

    def translate(sentence, steps=s["num_steps"]):
        return d2l.predict_seq2seq(net, sentence, src_vocab, tgt_vocab, steps, device)[0]

    def translate_long(sources):
        return [translate(source, s["long_steps"]) for source in sources]

    return net, seconds, losses[-1], translate, translate_long, tgt_vocab


class PrefixTask:
    """The translation page's rows: source padded to num_steps, the separator (the target's <bos> in the joint
    vocabulary), the target padded to num_steps, target token t written offset + t."""

    def __init__(self):
        from d2lcore.text import nmt_arrays

        n = SETTINGS["num_steps"]
        (src, _, tgt, tgt_len), self.src_vocab, self.tgt_vocab = nmt_arrays(
            n, SETTINGS["num_examples"]
        )
        self.offset = len(self.src_vocab)
        self.separator = self.offset + self.tgt_vocab["<bos>"]
        self.eos = self.offset + self.tgt_vocab["<eos>"]
        self.vocab_size = self.offset + len(self.tgt_vocab)
        sep = numpy.full((len(src), 1), self.separator)
        self.rows = numpy.concatenate([src, sep, self.offset + tgt], axis=1)
        self.prefix_lens = numpy.full(len(src), n + 1, numpy.int32)
        counted = numpy.arange(2 * n)[None, :] - n < tgt_len[:, None]
        self.weights = (counted & (numpy.arange(2 * n) >= n)).astype(numpy.float32)

    def to_french(self, ids):
        words = []
        for i in ids:
            if i == self.eos:
                break
            words.append(
                self.tgt_vocab.to_tokens([i - self.offset])[0] if i >= self.offset else "<unk>"
            )
        return " ".join(words)

    def prompts(self, sources, steps):
        from d2lcore.text import encode_source

        rows = [encode_source(x, self.src_vocab, steps)[0] + [self.separator] for x in sources]
        return numpy.array(rows, numpy.int32)


def train_prefix_lm(framework, d2l, net, task, epochs):
    """The translation page's training loop in ``framework``; returns the last epoch's loss per token."""
    lr, n = SETTINGS["lr"], SETTINGS["num_steps"]
    if framework == "pytorch":
        import torch
        from torch import nn

        data = d2l.load_array(
            (task.rows.astype(numpy.int64), task.prefix_lens, task.weights), SETTINGS["batch_size"]
        )
        net(torch.zeros((1, 2), dtype=torch.long))
        d2l.load_weights(net, d2l.xavier_uniform_weights(d2l.export_weights(net)))
        optimizer = torch.optim.Adam(net.parameters(), lr)
        loss_fn = nn.CrossEntropyLoss(reduction="none")
        net.train()
        for _ in range(epochs):
            total, count = 0.0, 0.0
            for tokens, prefix_lens, weights in data:
                logits, _ = net(tokens[:, :-1], prefix_lens)
                loss = (loss_fn(logits.permute(0, 2, 1), tokens[:, 1:]) * weights).sum()
                optimizer.zero_grad()
                (loss / weights.sum()).backward()
                optimizer.step()
                total, count = total + loss.item(), count + weights.sum().item()
        net.eval()
        return total / count
    data = d2l.load_array(
        (task.rows.astype(numpy.int32), task.prefix_lens, task.weights), SETTINGS["batch_size"]
    )
    if framework == "mxnet":
        from mxnet import autograd, gluon, np, npx

        net.initialize()
        net(np.zeros((1, 2), dtype="int32"))
        d2l.load_weights(net, d2l.xavier_uniform_weights(d2l.export_weights(net)))
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr})
        for _ in range(epochs):
            total, count = 0.0, 0.0
            for tokens, prefix_lens, weights in data:
                with autograd.record():
                    logits, _ = net(tokens[:, :-1], prefix_lens)
                    nll = -npx.pick(npx.log_softmax(logits), tokens[:, 1:])
                    loss = (nll * weights).sum()
                loss.backward()
                trainer.step(float(weights.sum()))
                total, count = total + float(loss), count + float(weights.sum())
        return total / count
    import keras
    import tensorflow as tf

    net(tf.zeros((1, 2), tf.int32))
    d2l.load_weights(net, d2l.xavier_uniform_weights(d2l.export_weights(net)))
    optimizer = keras.optimizers.Adam(lr)
    optimizer.build(net.trainable_variables)

    @tf.function(
        input_signature=[
            tf.TensorSpec((None, 2 * n + 1), tf.int32),
            tf.TensorSpec((None,), tf.int32),
            tf.TensorSpec((None, 2 * n), tf.float32),
        ]
    )
    def train_step(tokens, prefix_lens, weights):
        with tf.GradientTape() as tape:
            logits, _ = net(tokens[:, :-1], prefix_lens, training=True)
            nll = keras.losses.sparse_categorical_crossentropy(
                tokens[:, 1:], logits, from_logits=True
            )
            loss = tf.reduce_sum(nll * weights)
            per_token = loss / tf.reduce_sum(weights)
        grads = tape.gradient(per_token, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss, tf.reduce_sum(weights)

    for _ in range(epochs):
        total, count = 0.0, 0.0
        for batch in data:
            loss, tokens = train_step(*batch)
            total, count = total + float(loss), count + float(tokens)
    return total / count


def to_tensor(framework, array):
    if framework == "pytorch":
        import torch

        return torch.tensor(array, dtype=torch.long)
    if framework == "mxnet":
        from mxnet import np

        return np.array(array, dtype="int32")
    import tensorflow as tf

    return tf.constant(array)


def train_prefix(framework, d2l, epochs, rotary):
    s = SETTINGS
    task = PrefixTask()
    net = d2l.PrefixLM(
        task.vocab_size,
        s["num_hiddens"],
        s["ffn_num_hiddens"],
        s["num_heads"],
        s["num_layers"],
        s["dropout"],
        max_len=2 * s["long_steps"] + 1,
        rotary=rotary,
    )
    start = time.perf_counter()
    loss = train_prefix_lm(framework, d2l, net, task, epochs)
    seconds = time.perf_counter() - start

    def translate_all(sources, steps):
        prompts = to_tensor(framework, task.prompts(sources, steps))
        generated, _ = d2l.generate(net, prompts, steps, task.separator)
        return [task.to_french(row) for row in d2l.to_numpy(generated).tolist()]

    def translate(sentence):  # one at a time, as evaluate_held_out asks; cached below
        return outputs[sentence]

    from d2lcore.datasets import read_data_nmt
    from d2lcore.text import preprocess_nmt, tokenize_nmt

    sources, _ = tokenize_nmt(preprocess_nmt(read_data_nmt("heldout")))
    held_out = sorted({" ".join(tokens) for tokens in sources})
    outputs = dict(zip(held_out, translate_all(held_out, s["num_steps"])))

    def translate_long(sources):
        return translate_all(sources, s["long_steps"])

    return net, seconds, loss, translate, translate_long, task.tgt_vocab


def train_and_measure(framework, config, seed, epochs):
    """One run in this process: train ``config`` with ``seed``; returns its figures."""
    d2l = importlib.import_module(MODULE_OF[framework])
    d2l.set_seed(seed)
    load_before = records.load_average()
    if config == "encoder_decoder":
        net, seconds, loss, translate, translate_long, tgt_vocab = train_encoder_decoder(
            framework, d2l, epochs
        )
    else:
        net, seconds, loss, translate, translate_long, tgt_vocab = train_prefix(
            framework, d2l, epochs, rotary=config == "prefix_rotary"
        )
    load_after = records.load_average()
    with records.collect() as scored:
        d2l.evaluate_held_out(translate, tgt_vocab, "held_out")
    held_out = dict(scored[-1])
    return {
        "config": config,
        "seed": seed,
        "epochs": epochs,
        "device": str(d2l.try_gpu()),
        "train_seconds": round(seconds, 1),
        "loss_per_token": loss,
        "load_average": [load_before, load_after],
        "parameters": parameters(framework, net),
        "held_out": {k: held_out[k] for k in ("sentences", "bleu", "exact", "corpus_bleu", "chrf")},
        "longer": score_long(translate_long, long_pairs()),
    }


def write(out, args, runs, started):
    """The measurement file: settings, machine, every run's figures and the summary over seeds."""
    what = (
        "The encoder-decoder Transformer and the prefix language model (rotary or sinusoidal positions) on "
        "the same corpus and epochs, over seeds, per framework; written by benchmarks/lm_study.py"
    )
    data = {
        **study_head(what, started),
        "longer_sources": (
            "distinct held-out source i of the first half joined with source i of the second half (6 to 10 "
            "tokens; every training source has at most 5), references joined likewise; read with 20 source "
            "positions, up to 20 target tokens"
        ),
        "epochs": args.epochs,
        "seeds": sorted({r["seed"] for r in runs}),
        "configs": list(args.configs),
        "settings": SETTINGS,
        "runs": runs,
    }
    data["summary"] = summarise_lm_study(data)
    write_study(out, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frameworks", choices=FRAMEWORKS, nargs="+", default=list(FRAMEWORKS))
    parser.add_argument(
        "--configs", choices=LM_STUDY_CONFIGS, nargs="+", default=list(LM_STUDY_CONFIGS)
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--framework", choices=FRAMEWORKS, help=argparse.SUPPRESS)  # the worker's
    parser.add_argument("--config", choices=LM_STUDY_CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the child process: one run, its result as JSON on the last line
        print(json.dumps(train_and_measure(args.framework, args.config, args.seed, args.epochs)))
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
                held, longer = result["held_out"], result["longer"]
                print(
                    f"{framework} seed {seed} {config:>17}: {result['train_seconds']:.0f} s "
                    f"(load {result['load_average']}), {result['parameters']} parameters; held-out BLEU "
                    f"{held['bleu']:.3f}, chrF {held['chrf']:.1f}; longer sources BLEU {longer['bleu']:.3f}, "
                    f"chrF {longer['chrf']:.1f}",
                    flush=True,
                )
                write(args.out, args, runs, started)
    print(f"{args.out}: {len(runs)} runs in {time.perf_counter() - clock:.0f} s")


if __name__ == "__main__":
    main()
