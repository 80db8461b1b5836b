"""Tokens per second of greedy generation with the PrefixLM of the page Decoder-Only Models, the Key–Value Cache and
Rotary Embeddings, by generated length, three ways:

- ``kv``: d2l.generate with the cache of projected keys and values (each step runs the new token alone);
- ``inputs``: a cache of each block's inputs, as the Transformer decoder of the book keeps (each step projects the
  keys and values of every earlier position again, then runs the new token alone): written here from the model's
  own layers, the same computation as the encoder–decoder's cache;
- ``none``: d2l.generate without a cache (each step runs the whole sequence again).

A randomly initialised model (the speed does not depend on the weights' values) of the sizes of SETTINGS, one
prompt of PROMPT tokens, batch 1, float32, on the CPU with one thread per operation, argument checks off
(d2lcore.contracts.engine.unchecked: the figures are the frameworks', not the checks'). Each framework runs in its
own process. For each seed (weights and prompt), length and method: one unmeasured warm-up run of 4 tokens, then
the time of one generation of ``length`` tokens; the three ways must choose the same tokens (checked). Each run
records the load average at its end.

    nice -n 5 .venv/bin/python benchmarks/language_model.py            # all frameworks, 3 seeds, ~10 minutes
    .venv/bin/python benchmarks/language_model.py --frameworks pytorch --seeds 0 --lengths 16 --out /tmp/x.json

The book quotes the committed file (data/measurements/language_model.json) through records.
"""

import argparse
import datetime
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy
from seq2seq_run import study_head, write_study

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "measurements" / "language_model.json"
SETTINGS = {
    "vocab_size": 256,
    "num_hiddens": 64,
    "ffn_num_hiddens": 128,
    "num_heads": 4,
    "num_layers": 2,
    "prompt": 8,
}
LENGTHS = (16, 64, 256)
METHODS = ("kv", "inputs", "none")
FRAMEWORKS = ("mxnet", "pytorch", "tensorflow")
SEPARATOR = 1


def framework_ops(framework):
    """(tensor from NumPy, concatenate along an axis, NumPy of a tensor, argmax of the last axis as (batch, 1))."""
    if framework == "pytorch":
        import torch

        return (
            torch.tensor,
            lambda xs, axis: torch.cat(xs, dim=axis),
            lambda x: x.numpy(),
            lambda Y: Y.argmax(dim=-1, keepdim=True),
        )
    if framework == "tensorflow":
        import tensorflow as tf

        return (
            tf.constant,
            lambda xs, axis: tf.concat(xs, axis=axis),
            lambda x: x.numpy(),
            lambda Y: tf.argmax(Y, axis=-1, output_type=tf.int32)[:, None],
        )
    from mxnet import np

    return (
        np.array,
        lambda xs, axis: np.concatenate(xs, axis=axis),
        lambda x: x.asnumpy(),
        lambda Y: np.expand_dims(Y.argmax(axis=-1).astype("int32"), 1),
    )


def input_cache_generate(d2l, framework, net, prompt, num_steps):
    """Greedy generation with a cache of each block's inputs: at every step, each block projects the keys and
    values of all earlier positions from their inputs again (with their rotary embeddings), then runs the new
    positions on them. Returns the tokens, (batch, num_steps) NumPy."""
    tensor, cat, to_numpy, argmax = framework_ops(framework)
    ids = to_numpy(prompt)
    prefix_lens = tensor((ids == SEPARATOR).argmax(axis=1).astype(numpy.int32) + 1)
    inputs = [None] * len(net.blks)  # each block's inputs at the positions seen so far
    X, tokens = prompt, []
    for _ in range(num_steps):
        H = net.embedding(X)
        for i, blk in enumerate(net.blks):
            cache = None
            if inputs[i] is not None:  # the keys and values of the past, computed again
                attention = blk.attention
                keys = d2l.rotary_embedding(attention.split_heads(attention.W_k(inputs[i])), 0)
                values = attention.split_heads(attention.W_v(inputs[i]))
                cache = (keys, values)
            inputs[i] = H if inputs[i] is None else cat((inputs[i], H), 1)
            H, _ = blk(H, prefix_lens, cache)
        X = argmax(net.dense(H)[:, -1])  # (batch, 1)
        tokens.append(to_numpy(X)[:, 0])
    return numpy.stack(tokens, axis=1)


def child(framework, lengths, seeds):
    """This process's runs: prints one JSON line per run."""
    from d2lcore import MODULE_OF
    from d2lcore.contracts.engine import unchecked

    d2l = importlib.import_module(MODULE_OF[framework])
    tensor, _, to_numpy, _ = framework_ops(framework)
    s = SETTINGS
    for seed in seeds:
        d2l.set_seed(seed)
        net = d2l.PrefixLM(
            s["vocab_size"],
            s["num_hiddens"],
            s["ffn_num_hiddens"],
            s["num_heads"],
            s["num_layers"],
            0.0,
            max_len=s["prompt"] + max(lengths),
        )
        if framework == "mxnet":
            net.initialize()
        if framework == "pytorch":
            net.eval()
        rng = numpy.random.default_rng(seed)
        ids = rng.integers(2, s["vocab_size"], size=(1, s["prompt"])).astype(numpy.int32)
        ids[0, s["prompt"] // 2] = SEPARATOR
        prompt = tensor(ids.astype(numpy.int64) if framework == "pytorch" else ids)

        def run(method, steps, net=net, prompt=prompt):
            if method == "inputs":
                return input_cache_generate(d2l, framework, net, prompt, steps)
            return to_numpy(d2l.generate(net, prompt, steps, SEPARATOR, method == "kv")[0])

        with unchecked(), _no_grad(framework):
            for length in lengths:
                chosen = {}
                for method in METHODS:
                    run(method, 4)  # warm-up
                    start = time.perf_counter()
                    chosen[method] = run(method, length)
                    seconds = time.perf_counter() - start
                    print(
                        json.dumps(
                            {
                                "framework": framework,
                                "seed": seed,
                                "length": length,
                                "method": method,
                                "seconds": seconds,
                                "tokens_per_second": length / seconds,
                                "load_average": [round(x, 2) for x in os.getloadavg()[:2]],
                            }
                        ),
                        flush=True,
                    )
                for method in METHODS:
                    if not (chosen[method] == chosen["kv"]).all():
                        sys.exit(
                            f"{framework} seed {seed} length {length}: {method} chose other tokens"
                        )


def _no_grad(framework):
    if framework == "pytorch":
        import torch

        return torch.no_grad()
    import contextlib

    return contextlib.nullcontext()


def versions(frameworks):
    import importlib.metadata

    packages = {"pytorch": ("torch",), "tensorflow": ("tensorflow", "tensorflow-cpu", "keras")}
    packages["mxnet"] = ("mxnet",)
    found = {}
    for framework in frameworks:
        for package in packages[framework]:
            try:
                found[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                pass
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--frameworks", nargs="+", default=list(FRAMEWORKS), choices=FRAMEWORKS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--child", metavar="FRAMEWORK", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.lengths, args.seeds)
        return
    env = dict(os.environ, D2L_NUM_THREADS="1", TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    runs = []
    for framework in args.frameworks:
        command = [sys.executable, __file__, "--child", framework, "--lengths"]
        command += [str(n) for n in args.lengths] + ["--seeds"] + [str(s) for s in args.seeds]
        out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
        if out.returncode != 0:
            sys.exit(f"{framework} failed:\n{out.stderr[-3000:]}")
        for line in out.stdout.strip().splitlines():
            if line.startswith("{"):
                run = json.loads(line)
                runs.append(run)
                print(
                    f"{framework:10} seed {run['seed']} {run['method']:6} {run['length']:4} tokens: "
                    f"{run['tokens_per_second']:8.1f} tokens/s, load {run['load_average']}",
                    flush=True,
                )
    what = (
        "Tokens per second of greedy generation by a PrefixLM, by generated length, with the cache of "
        "projected keys and values (kv), a cache of each block's inputs (inputs) and no cache (none); written "
        "by benchmarks/language_model.py"
    )
    data = {
        **study_head(what, datetime.datetime.now(datetime.UTC), threads=1),
        "how": "a random model of the settings' sizes, batch 1, float32, CPU, one thread per operation, argument "
        "checks off; per seed, length and method one warm-up of 4 tokens, then one timed generation; the three "
        "methods choose the same tokens (checked)",
        "device": "cpu",
        "versions": versions(args.frameworks),
        "settings": dict(SETTINGS, lengths=args.lengths, seeds=args.seeds),
        "runs": runs,
    }
    write_study(args.out, data)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
