"""Time the book's Transformer: its training run per framework, and its multi-head attention
against each framework's own attention.

1. training: the run of section "The Transformer": the first 600 pairs of the project's
   English–French corpus, batch 64, 10 steps, 32 hidden units, FFN 64, 4 heads, 2 layers,
   dropout 0.1, Adam with learning rate 0.005, 200 epochs, on d2l.try_gpu(). Prints the wall
   time of train_seq2seq, its tokens/s and final loss per token, the four test translations
   with their BLEU (k = 2). The comparison with the reference's training loop, run side by side
   on the same machine, is benchmarks/side_by_side.py (figures taken on another day or machine
   are not comparable, so none is kept here).
2. attention: forward + backward of one multi-head self-attention (batch 32, 256 steps, 256
   hidden units, 8 heads, no dropout), without a mask and with random valid lengths
   (batch,), in ms per call (median of --repeats timings of --number calls, after a
   warm-up; the variants are timed in turns), with the ratio of ours to each variant
   (the median of the ratios of the same turn, more robust to load than the times).
   d2lcore's MultiHeadAttention against, with the same weights:
     PyTorch:    its W_q/W_k/W_v/W_o around F.scaled_dot_product_attention;
                 torch.nn.MultiheadAttention (need_weights=False: its fused path);
     TensorFlow: ours eager and under tf.function; keras.layers.MultiHeadAttention under
                 tf.function; our projections around keras.ops.dot_product_attention;
     MXNet:      ours; the fused self-attention ops of MXNet 1.9.1. These are not in mx.npx
                 (it has no attention op) but in the legacy mx.nd.contrib namespace
                 (interleaved_matmul_selfatt_qk / _valatt), applied here to our
                 projections; autograd passes through as_nd_ndarray / as_np_ndarray.
   Each alternative's output is compared with ours (max |difference|), so that the times
   compare the same computation.

Each framework runs in a fresh Python process, with the environment of the book's Jupyter
kernel for that framework (booktools/kernels.py), as in benchmarks/bahdanau.py.

    .venv/bin/python benchmarks/transformer.py                      # both parts, all frameworks
    .venv/bin/python benchmarks/transformer.py --only attention --framework pytorch
    .venv/bin/python benchmarks/transformer.py --only training --epochs 2    # a smoke run

The timings mean little on a machine that other work keeps busy: the load average is
printed before and after each run.
"""

import argparse
import importlib
import json
import os
import statistics
import sys
import time

import numpy
from seq2seq_run import SEED, load_text, measure_training, report_training, run_worker

from d2lcore import FRAMEWORKS, MODULE_OF

EPOCHS = 200


# --- 1. the training run -----------------------------------------------------------------


def train_one(framework, epochs, seed):
    """The Transformer's training run, in this process; returns the figures as a dict."""
    d2l = importlib.import_module(MODULE_OF[framework])
    if not hasattr(d2l, "TransformerDecoder"):
        raise SystemExit(f"{MODULE_OF[framework]} does not export TransformerDecoder yet")
    num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout = 32, 64, 4, 2, 0.1
    batch_size, num_steps, lr = 64, 10, 0.005
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(batch_size, num_steps)
    encoder = d2l.TransformerEncoder(
        len(src_vocab), num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout
    )
    decoder = d2l.TransformerDecoder(
        len(tgt_vocab), num_hiddens, ffn_num_hiddens, num_heads, num_layers, dropout
    )
    net = d2l.EncoderDecoder(encoder, decoder)
    result = measure_training(
        d2l, net, train_iter, src_vocab, tgt_vocab, lr, epochs, num_steps, device
    )
    return {"framework": framework, **result}


def report_training_run(result):
    print(f"== training, {result['framework']} ({result['epochs']} epochs) ==")
    report_training(result, "against the reference, side by side: benchmarks/side_by_side.py")


# --- 2. multi-head attention against the frameworks' own -----------------------------------


def _time_alternating(timings, warmup, repeats, number):
    """Time the registered calls in turns: each repeat times ``number`` calls of every one
    in a row, so that a change of the machine's load hits all of them alike. ``timings``:
    a list of (call, sync, times); each repeat appends to ``times`` the mean ms per call.
    ``sync(result)`` waits until the device has finished the work of a call.

    The turn starts at another call each repeat, and every timing follows one untimed
    call of its own: the first call after a different one pays for the allocator's and the
    caches' change of working set, which would otherwise always fall on the same row."""
    for call, sync, _ in timings:
        for _ in range(warmup):
            sync(call())
    for repeat in range(repeats):
        start_at = repeat % len(timings)
        for call, sync, times in timings[start_at:] + timings[:start_at]:
            sync(call())  # untimed: the change of working set
            start = time.perf_counter()
            for _ in range(number):
                result = call()
            sync(result)
            times.append((time.perf_counter() - start) / number * 1000)


def _inputs(cfg):
    """X (batch, steps, hiddens) and valid lengths (batch,) in 1 ... steps, as NumPy, seeded."""
    rng = numpy.random.default_rng(cfg["seed"])
    X = rng.standard_normal((cfg["batch"], cfg["steps"], cfg["hiddens"]), dtype=numpy.float32)
    lens = rng.integers(1, cfg["steps"] + 1, size=cfg["batch"])
    return X, lens


def _attention_pytorch(cfg, time_ms):
    import torch
    import torch.nn.functional as F

    import d2lcore.torch as d2l

    d2l.set_seed(cfg["seed"])
    device = d2l.try_gpu()
    h, H = cfg["heads"], cfg["hiddens"]
    X_np, lens_np = _inputs(cfg)
    X = torch.tensor(X_np, device=device, requires_grad=True)
    lens = torch.tensor(lens_np, device=device)
    keep = torch.arange(X.shape[1], device=device) < lens[:, None]  # (batch, keys)

    ours = d2l.MultiHeadAttention(H, h, 0.0).to(device)
    ours(X, X, X)  # creates the lazy weights
    ours.train()

    def split(Z):  # (batch, n, H) -> (batch, heads, n, H / heads)
        return Z.reshape(Z.shape[0], Z.shape[1], h, -1).transpose(1, 2)

    def sdpa(mask):
        Q, K, V = split(ours.W_q(X)), split(ours.W_k(X)), split(ours.W_v(X))
        attn_mask = None if mask is None else mask[:, None, None, :]
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)
        return ours.W_o(out.transpose(1, 2).reshape(X.shape))

    torch_mha = torch.nn.MultiheadAttention(H, h, bias=False, batch_first=True).to(device)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(
            torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight])
        )
        torch_mha.out_proj.weight.copy_(ours.W_o.weight)

    def nn_mha(mask):
        padding = None if mask is None else ~mask
        return torch_mha(X, X, X, key_padding_mask=padding, need_weights=False)[0]

    variants = {
        "ours: d2l.MultiHeadAttention": lambda mask: ours(X, X, X, None if mask is None else lens),
        "our W_q/W_k/W_v/W_o + F.scaled_dot_product_attention": sdpa,
        "torch.nn.MultiheadAttention(need_weights=False)": nn_mha,
    }
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def fwd_bwd(forward, mask):
        def call():
            X.grad = None
            out = forward(mask)
            out.sum().backward()
            return out

        return call

    rows = []
    for name, forward in variants.items():
        row = {"name": name, "ms": {}, "diff": {}}
        for label, mask in (("no mask", None), ("valid_lens", keep)):
            with torch.no_grad():
                ref = variants["ours: d2l.MultiHeadAttention"](mask)
                row["diff"][label] = float((forward(mask) - ref).abs().max())
            row["ms"][label] = time_ms(fwd_bwd(forward, mask), lambda _: sync())
        rows.append(row)
    return rows, f"{device}, {torch.get_num_threads()} threads"


def _attention_tensorflow(cfg, time_ms):
    import keras
    import tensorflow as tf

    import d2lcore.tensorflow as d2l

    d2l.set_seed(cfg["seed"])
    device = d2l.try_gpu()
    h, H = cfg["heads"], cfg["hiddens"]
    X_np, lens_np = _inputs(cfg)
    with tf.device(device.name):
        X = tf.constant(X_np)
        lens = tf.constant(lens_np, dtype=tf.int32)
        keep = tf.range(X.shape[1])[None, :] < lens[:, None]  # (batch, keys)

        ours = d2l.MultiHeadAttention(H, h, 0.0)
        ours(X, X, X)  # creates the weights
        keras_mha = keras.layers.MultiHeadAttention(h, H // h, use_bias=False)
        keras_mha(X, X)
        # Ours splits features i * d ... i * d + d - 1 to head i, as Keras's kernels do.
        for theirs, mine in [
            (keras_mha._query_dense, ours.W_q),
            (keras_mha._key_dense, ours.W_k),
            (keras_mha._value_dense, ours.W_v),
        ]:
            theirs.kernel.assign(tf.reshape(mine.kernel, (H, h, H // h)))
        keras_mha._output_dense.kernel.assign(tf.reshape(ours.W_o.kernel, (h, H // h, H)))

        def split(Z):  # (batch, n, H) -> (batch, n, heads, H / heads)
            return tf.reshape(Z, (Z.shape[0], Z.shape[1], h, H // h))

        def ops_attention(mask):
            Q, K, V = split(ours.W_q(X)), split(ours.W_k(X)), split(ours.W_v(X))
            mask = None if mask is None else mask[:, None, None, :]
            out = keras.ops.dot_product_attention(Q, K, V, mask=mask)
            return ours.W_o(tf.reshape(out, X.shape))

        def keras_call(mask):
            if mask is not None:  # (batch, queries, keys)
                mask = tf.broadcast_to(mask[:, None, :], (X.shape[0], X.shape[1], X.shape[1]))
            return keras_mha(X, X, attention_mask=mask, training=True)

        def our_call(mask):
            return ours(X, X, X, None if mask is None else lens, training=True)

        def step(forward, variables, mask):
            def run():
                with tf.GradientTape() as tape:
                    tape.watch(X)
                    loss = tf.reduce_sum(forward(mask))
                # returned, so that tf.function does not prune the gradients
                return loss, tape.gradient(loss, [X, *variables])

            return run

        variants = [
            ("ours: d2l.MultiHeadAttention under tf.function", our_call, ours, True),
            ("ours, eager", our_call, ours, False),
            ("keras.layers.MultiHeadAttention under tf.function", keras_call, keras_mha, True),
            (
                "our W_q/W_k/W_v/W_o + keras.ops.dot_product_attention, tf.function",
                ops_attention,
                ours,
                True,
            ),
        ]
        rows = []
        for name, forward, layer, compiled in variants:
            row = {"name": name, "ms": {}, "diff": {}}
            for label, mask in (("no mask", None), ("valid_lens", keep)):
                ref = our_call(mask)
                row["diff"][label] = float(tf.reduce_max(tf.abs(forward(mask) - ref)))
                run = step(forward, layer.trainable_variables, mask)
                call = tf.function(run) if compiled else run
                row["ms"][label] = time_ms(call, lambda result: result[0].numpy())
            rows.append(row)
    return rows, device.name


def _attention_mxnet(cfg, time_ms):
    d2l = importlib.import_module("d2lcore.mxnet")  # before mxnet: NumPy shim, npx.set_np()
    import mxnet as mx
    from mxnet import autograd, np, npx

    d2l.set_seed(cfg["seed"])
    h, H = cfg["heads"], cfg["hiddens"]
    X_np, lens_np = _inputs(cfg)
    X = np.array(X_np)
    X.attach_grad()
    lens = np.array(lens_np, dtype="int32")

    ours = d2l.MultiHeadAttention(H, h, 0.0)
    ours.initialize()
    ours(X, X, X)  # creates the weights
    # The fused ops read one (steps, batch, heads * 3 * d) input that interleaves each
    # head's query, key and value features; W_qkv is ours rearranged in that order.
    W = [ours.W_q.weight.data(), ours.W_k.weight.data(), ours.W_v.weight.data()]
    W_qkv = np.stack([w.reshape(h, H // h, H) for w in W], axis=1).reshape(3 * H, H)
    W_qkv.attach_grad()
    contrib = mx.nd.contrib

    def fused(mask):
        qkv = np.dot(X, W_qkv.T).transpose(1, 0, 2).as_nd_ndarray()  # (steps, batch, 3H)
        scores = contrib.interleaved_matmul_selfatt_qk(qkv, heads=h)  # (batch * h, q, k)
        if mask is None:
            weights = mx.nd.softmax(scores, axis=-1)
        else:  # one length per (example, head, query)
            length = np.repeat(lens, h * X.shape[1]).reshape(scores.shape[:2])
            weights = mx.nd.softmax(scores, length.as_nd_ndarray(), axis=-1, use_length=True)
        out = contrib.interleaved_matmul_selfatt_valatt(qkv, weights, heads=h)
        return ours.W_o(out.as_np_ndarray().transpose(1, 0, 2))  # (batch, steps, H)

    def our_call(mask):
        return ours(X, X, X, None if mask is None else lens)

    def fwd_bwd(forward, mask):
        def call():
            with autograd.record():
                out = forward(mask)
                loss = out.sum()
            loss.backward()
            return out

        return call

    rows = []
    for name, forward in [
        ("ours: d2l.MultiHeadAttention", our_call),
        ("mx.nd.contrib.interleaved_matmul_selfatt_* on our weights", fused),
    ]:
        row = {"name": name, "ms": {}, "diff": {}}
        for label, mask in (("no mask", None), ("valid_lens", lens)):
            diff = np.abs(forward(mask) - our_call(mask)).max()
            row["diff"][label] = float(diff)
            row["ms"][label] = time_ms(fwd_bwd(forward, mask), lambda _: npx.waitall())
        rows.append(row)
    threads = os.environ.get("OMP_NUM_THREADS")
    return rows, f"{mx.cpu()}, OMP_NUM_THREADS {threads}"


def attention_one(framework, cfg):
    """The attention timings of one framework, in this process; returns a dict. Each
    row's ``ms`` holds, per mask, the times of every repeat (ms per call)."""
    timings = []

    def time_ms(call, sync):  # registers the call; its times come in the list returned
        times = []
        timings.append((call, sync, times))
        return times

    run = {
        "mxnet": _attention_mxnet,
        "pytorch": _attention_pytorch,
        "tensorflow": _attention_tensorflow,
    }[framework]
    load_before = os.getloadavg()
    rows, where = run(cfg, time_ms)
    _time_alternating(timings, cfg["warmup"], cfg["repeats"], cfg["number"])
    return {
        "framework": framework,
        "cfg": cfg,
        "rows": rows,
        "where": where,
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


def report_attention(result):
    """The table: per row and mask, the median ms per call, and the median over repeats of
    the ratio of ours (the first row) to the row's time, measured in the same repeat."""
    cfg = result["cfg"]
    print(
        f"== attention, {result['framework']}: self-attention, batch {cfg['batch']}, "
        f"{cfg['steps']} steps, {cfg['hiddens']} hidden, {cfg['heads']} heads, on "
        f"{result['where']} =="
    )
    print(
        f"   ms per forward + backward, median of {cfg['repeats']} x {cfg['number']} calls "
        f"after {cfg['warmup']} warm-up, all rows timed in turns; [ours / row], the median "
        "of the ratios of each turn; max |output - ours| in brackets"
    )
    rows = result["rows"]
    masks = ("no mask", "valid_lens")
    width = max(len(row["name"]) for row in rows)
    print(f"   {'':<{width}}  {'no mask':>26}  {'valid_lens':>26}")
    for row in rows:
        cells = []
        for k in masks:
            ours, times = rows[0]["ms"][k], row["ms"][k]
            ratio = statistics.median(a / b for a, b in zip(ours, times, strict=True))
            cells.append(f"{statistics.median(times):8.1f} [{ratio:4.2f}x] ({row['diff'][k]:.1e})")
        print(f"   {row['name']:<{width}}  {cells[0]:>26}  {cells[1]:>26}")
    ours = rows[0]["ms"]
    ratio = statistics.median(
        a / b for a, b in zip(ours["valid_lens"], ours["no mask"], strict=True)
    )
    print(f"   ours with valid_lens / ours without: {ratio:.2f}x")
    print(f"   load average (1/5/15 min) {load_text(result['load_before'], result['load_after'])}")
    sys.stdout.flush()


# --- driver ------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=[*FRAMEWORKS, "all"], default="all")
    parser.add_argument("--only", choices=["training", "attention"], default=None)
    parser.add_argument("--epochs", type=int, default=EPOCHS, help="training epochs (200)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed ({SEED}, as the pages)")
    parser.add_argument("--batch", type=int, default=32, help="attention: batch size")
    parser.add_argument("--steps", type=int, default=256, help="attention: sequence length")
    parser.add_argument("--hiddens", type=int, default=256, help="attention: num_hiddens")
    parser.add_argument("--heads", type=int, default=8, help="attention: num_heads")
    parser.add_argument("--warmup", type=int, default=2, help="attention: warm-up calls")
    parser.add_argument("--repeats", type=int, default=6, help="attention: timings (turns)")
    parser.add_argument("--number", type=int, default=2, help="attention: calls per timing")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="set OMP_NUM_THREADS for every framework (default: as in the book's kernels)",
    )
    parser.add_argument("--worker", choices=["training", "attention"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    cfg = {k: getattr(args, k) for k in ("batch", "steps", "hiddens", "heads", "seed")}
    cfg.update(warmup=args.warmup, repeats=args.repeats, number=args.number)
    if args.worker == "training":  # a child process: one framework, JSON on the last line
        print(json.dumps(train_one(args.framework, args.epochs, args.seed)))
        return
    if args.worker == "attention":
        print(json.dumps(attention_one(args.framework, cfg)))
        return
    frameworks = FRAMEWORKS if args.framework == "all" else [args.framework]
    parts = [args.only] if args.only else ["training", "attention"]
    for part in parts:
        for framework in frameworks:
            arguments = [
                f"--worker={part}",
                f"--epochs={args.epochs}",
                *(f"--{k}={v}" for k, v in cfg.items()),
            ]
            result = run_worker(__file__, framework, arguments, args.threads)
            if result is not None:
                (report_training_run if part == "training" else report_attention)(result)


if __name__ == "__main__":
    main()
