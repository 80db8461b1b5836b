"""Peak memory of attention against sequence length on the CPU: attention written out (d2l.DotProductAttention,
whose scores and weights are (batch * heads, n, n) tensors), the tiled attention of the page Grouped-Query and
Memory-Efficient Attention (d2l.tiled_attention, one (batch * heads, n, tile) tile of scores at a time), and the
framework's own fused attention: torch.nn.functional.scaled_dot_product_attention in PyTorch,
keras.ops.dot_product_attention in TensorFlow (Keras 3); MXNet 1.9 has no fused attention.

Self-attention of one example, forward pass only (no gradient), float32, with the settings of SETTINGS (heads of 64
features, as in the H100 measurement the page quotes).

How memory is measured. tracemalloc does not see the tensors (the frameworks allocate them in native code), so
each point (framework, method, length) runs in a fresh process, with one thread per operation, and measures the
growth of the process's peak resident memory: the method runs once on 64 positions (loading the kernels and
libraries it uses), the inputs are made, the peak is reset to the memory resident now (Linux's
/proc/self/clear_refs), the method runs once on the measured length, and the peak (VmHWM of /proc/self/status)
is read; the difference is the memory that the call needed beyond what was resident before it (its intermediates
and its output). glibc's malloc is told to map every block of 64 KiB or more on its own and to unmap it when
freed (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_), so that freed memory kept resident does not hide part of a
call's needs; MXNet's own memory pool still keeps what it freed. Beside it, the size of the largest intermediate
that the method's code holds, computed from the shapes: the (batch * heads, n, n) scores of attention written
out, the (batch * heads, n, tile) scores of one tile of the tiled version (none for the fused kernels, whose
inner buffers the frameworks do not report). The time is the median of three further calls. Each point records
the load average at its end: the peak memory does not depend on the load, the times do.

    nice -n 5 .venv/bin/python benchmarks/efficient_attention.py          # all frameworks, ~5 minutes
    .venv/bin/python benchmarks/efficient_attention.py --lengths 256 512 --frameworks pytorch --out /tmp/x.json

The book draws the committed file (data/measurements/efficient_attention.json) with
d2lcore.measurements.show_efficient_attention.
"""

import argparse
import datetime
import importlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "measurements" / "efficient_attention.json"
SETTINGS = {"batch": 1, "heads": 4, "head_dim": 64, "tile_size": 128, "dtype": "float32"}
LENGTHS = (512, 1024, 2048, 4096)
METHODS = {
    "mxnet": ("plain", "tiled"),
    "pytorch": ("plain", "tiled", "fused"),
    "tensorflow": ("plain", "tiled", "fused"),
}
WARM_UP = 64  # positions of the first, unmeasured call


def status_bytes(field):
    """A field of /proc/self/status in bytes: VmRSS (resident now) or VmHWM (the peak since the last reset)."""
    text = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", text, re.M).group(1)) * 1024


def reset_peak():
    """Make the peak resident memory (VmHWM) the memory resident now (Linux: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def make_call(framework, method, n, settings):
    """A function that runs ``method`` once on ``n`` positions and waits for its result."""
    import numpy

    from d2lcore import MODULE_OF

    d2l = importlib.import_module(MODULE_OF[framework])
    rows, heads, d = settings["batch"] * settings["heads"], settings["heads"], settings["head_dim"]
    rng = numpy.random.default_rng(0)
    q, k, v = (rng.normal(size=(rows, n, d)).astype(numpy.float32) for _ in range(3))
    tile = settings["tile_size"]
    if framework == "pytorch":
        import torch
        import torch.nn.functional as F

        q, k, v = (torch.tensor(a) for a in (q, k, v))
        attention = d2l.DotProductAttention(0.0).eval()

        def run():
            with torch.no_grad():
                if method == "plain":
                    return attention(q, k, v)
                if method == "tiled":
                    return d2l.tiled_attention(q, k, v, tile_size=tile)[0]
                # (batch, heads, n, d)
                return F.scaled_dot_product_attention(
                    *(x.reshape(-1, heads, n, d) for x in (q, k, v))
                )

        return run
    if framework == "tensorflow":
        import keras
        import tensorflow as tf

        q, k, v = (tf.constant(a) for a in (q, k, v))
        attention = d2l.DotProductAttention(0.0)

        def run():
            if method == "plain":
                out = attention(q, k, v, training=False)
            elif method == "tiled":
                out = d2l.tiled_attention(q, k, v, tile_size=tile)[0]
            else:  # (batch, n, heads, d)
                four = [
                    tf.transpose(tf.reshape(x, (-1, heads, n, d)), (0, 2, 1, 3)) for x in (q, k, v)
                ]
                out = keras.ops.dot_product_attention(*four)
            return out.numpy()

        return run
    from mxnet import np, npx

    q, k, v = (np.array(a) for a in (q, k, v))
    attention = d2l.DotProductAttention(0.0)
    attention.initialize()

    def run():
        out = (
            attention(q, k, v)
            if method == "plain"
            else d2l.tiled_attention(q, k, v, tile_size=tile)[0]
        )
        npx.waitall()
        return out

    return run


def largest_intermediate(method, n, settings):
    """Bytes of the largest tensor the method's code holds, from the shapes; None for the fused kernels."""
    rows = settings["batch"] * settings["heads"]
    if method == "plain":
        return rows * n * n * 4
    if method == "tiled":
        return rows * n * min(settings["tile_size"], n) * 4
    return None


def child(framework, method, n, settings):
    """One point, in this fresh process: prints its figures as JSON."""
    make_call(framework, method, WARM_UP, settings)()
    run = make_call(framework, method, n, settings)
    reset_peak()
    before = status_bytes("VmRSS")
    run()
    growth = status_bytes("VmHWM") - before
    times = []
    for _ in range(3):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "framework": framework,
                "method": method,
                "n": n,
                "peak_growth_bytes": growth,
                "largest_intermediate_bytes": largest_intermediate(method, n, settings),
                "seconds": statistics.median(times),
                "load_average": [round(x, 2) for x in os.getloadavg()[:2]],
            }
        )
    )


def versions(frameworks):
    """The installed versions of the frameworks measured (TensorFlow's CPU build is the package tensorflow-cpu)."""
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
    parser.add_argument("--frameworks", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--child", nargs=3, metavar=("FRAMEWORK", "METHOD", "N"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        framework, method, n = args.child
        child(framework, method, int(n), SETTINGS)
        return
    env = dict(os.environ, D2L_NUM_THREADS="1", TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="3")
    # glibc's malloc: every block of 64 KiB or more mapped on its own and unmapped when freed, so that the
    # resident memory follows the tensors alive (by default freed memory may stay resident and be reused, hiding
    # part of a later call's needs)
    env.update(MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    runs = []
    for framework in args.frameworks:
        for method in METHODS[framework]:
            for n in args.lengths:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", framework, method, str(n)],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=600,
                )
                if out.returncode != 0:
                    sys.exit(f"{framework} {method} {n} failed:\n{out.stderr[-3000:]}")
                run = json.loads(out.stdout.strip().splitlines()[-1])
                runs.append(run)
                print(
                    f"{framework:10} {method:6} n={n:5}: peak +{run['peak_growth_bytes'] / 2**20:8.1f} MiB, "
                    f"{run['seconds'] * 1e3:8.1f} ms, load {run['load_average']}",
                    flush=True,
                )
    data = {
        "what": "Peak resident memory growth (bytes) and time of one forward pass of self-attention, by sequence "
        "length: attention written out, d2l.tiled_attention and the framework's fused attention; written by "
        "benchmarks/efficient_attention.py",
        "how": "each point in a fresh process: growth of the peak resident memory (VmHWM, reset by clear_refs just "
        "before) over one call, after a warm-up call on "
        f"{WARM_UP} positions; glibc malloc with MALLOC_MMAP_THRESHOLD_=65536, MALLOC_TRIM_THRESHOLD_=0; largest "
        "intermediate from the shapes; time the median of 3 calls; one thread",
        "command": " ".join(["benchmarks/efficient_attention.py", *sys.argv[1:]]),
        "date": datetime.date.today().isoformat(),
        "device": "cpu",
        "machine": {
            "cores": os.cpu_count(),
            "processor": platform.machine(),
            "threads_per_operation": 1,
        },
        "versions": versions(args.frameworks),
        "settings": dict(SETTINGS, lengths=args.lengths),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
