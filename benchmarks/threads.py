"""Which CPU thread settings keep the book's training runs fast, on a quiet machine and on a busy one.

For each framework, a short run of the Bahdanau training (that page's model and data, fewer epochs) is timed
under several candidate settings, each in a fresh Python process: with the machine as it is ("quiet"), and with
one CPU-bound competing process, a Python busy loop that this script starts before and stops after the loaded
runs. The candidates alternate (repeat 1 of every candidate, then repeat 2, ...), and the table gives the median of
the repeats with the 1-minute load average measured around each condition.

Candidates: "(d2lcore's choice)", with no thread variable set (one thread; TensorFlow one intra-op and one
inter-op thread), and the alternatives, applied in the worker after d2lcore's import and before the framework runs
anything (D2L_NUM_THREADS, OMP_NUM_THREADS and OMP_WAIT_POLICY are removed from the environment first):
  PyTorch:    2 intra-op threads with OMP_WAIT_POLICY=PASSIVE, one inter-op thread besides one intra-op thread
  MXNet:      2 OpenMP threads with OMP_WAIT_POLICY=PASSIVE
  TensorFlow: its default pools (as many threads as cores), intra-op 2 with inter-op 1, intra-op 1 with the
              default inter-op pool
Two spin-waiting threads for PyTorch and MXNet (OpenMP's default) only with --with-spinning: with a busy core
they take 10-30 times as long.

    .venv/bin/python benchmarks/threads.py                         # all frameworks, 3 repeats
    .venv/bin/python benchmarks/threads.py --framework pytorch --epochs 10 --repeats 3
"""

import argparse
import contextlib
import importlib
import io
import json
import os
import statistics
import subprocess
import sys
import time

from seq2seq_run import ROOT, SEED

from d2lcore import FRAMEWORKS, MODULE_OF, records

# name -> (environment variables, settings the worker applies through the framework's API)
CANDIDATES = {
    "pytorch": {
        "2 threads": ({"OMP_NUM_THREADS": "2"}, {"intra": 2}),
        "2 threads, PASSIVE": (
            {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"},
            {"intra": 2},
        ),
        "1 thread, 1 interop": ({"OMP_NUM_THREADS": "1"}, {"intra": 1, "inter": 1}),
    },
    "mxnet": {
        "2 threads": ({"OMP_NUM_THREADS": "2"}, {}),
        "2 threads, PASSIVE": ({"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"}, {}),
    },
    "tensorflow": {  # 0: TensorFlow's default (a pool as large as the number of cores)
        "default pools": ({}, {"intra": 0, "inter": 0}),
        "intra 2, inter 1": ({}, {"intra": 2, "inter": 1}),
        "intra 1, default inter": ({}, {"intra": 1, "inter": 0}),
    },
}
"""Each framework's alternatives to d2lcore's own choice (one thread; TensorFlow: one intra-op and one inter-op
thread), which runs as "(d2lcore's choice)" with no thread variable set."""
CHOSEN_BY_THE_LIBRARY = "(d2lcore's choice)"
SPINNING = "2 threads"  # OpenMP's default wait policy: idle threads spin


def apply(framework, settings):
    """Apply the API settings of a candidate, before the framework has run anything."""
    if framework == "pytorch":
        import torch

        if "intra" in settings:
            torch.set_num_threads(settings["intra"])
        if "inter" in settings:
            torch.set_num_interop_threads(settings["inter"])
    elif framework == "tensorflow":
        import tensorflow as tf

        if "intra" in settings:
            tf.config.threading.set_intra_op_parallelism_threads(settings["intra"])
        if "inter" in settings:
            tf.config.threading.set_inter_op_parallelism_threads(settings["inter"])


def worker(framework, epochs, settings, library):
    """One short training run in this process; returns its figures."""
    d2l = importlib.import_module(MODULE_OF[framework])  # d2lcore first (MXNet's shim)
    if not library:
        apply(framework, settings)
    d2l.set_seed(SEED)
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(64, 10)
    encoder = d2l.Seq2SeqEncoder(len(src_vocab), 32, 32, 2, 0.1)
    decoder = d2l.Seq2SeqAttentionDecoder(len(tgt_vocab), 32, 32, 2, 0.1)
    net = d2l.EncoderDecoder(encoder, decoder)
    with contextlib.redirect_stdout(io.StringIO()), records.collect():
        start = time.perf_counter()
        d2l.train_seq2seq(net, train_iter, 0.005, epochs, tgt_vocab, d2l.try_gpu())
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "threads": threads_in_use(framework)}


def threads_in_use(framework):
    """What the framework reports about its thread pools, for the record."""
    if framework == "pytorch":
        import torch

        return f"intra {torch.get_num_threads()}, inter {torch.get_num_interop_threads()}"
    if framework == "tensorflow":
        import tensorflow as tf

        intra = tf.config.threading.get_intra_op_parallelism_threads()
        inter = tf.config.threading.get_inter_op_parallelism_threads()
        return f"intra {intra or 'default'}, inter {inter or 'default'}"
    return f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"


def run(framework, name, epochs):
    """Time one candidate in a fresh process; returns seconds of training (None if it failed)."""
    library = name == CHOSEN_BY_THE_LIBRARY
    env_vars, settings = ({}, {}) if library else CANDIDATES[framework][name]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_NUM_THREADS", "D2L_NUM_THREADS", "OMP_WAIT_POLICY")
    }
    env.update({"TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0", **env_vars})
    arguments = json.dumps({"settings": settings, "library": library})
    command = [sys.executable, __file__, "--worker", arguments, f"--framework={framework}"]
    command.append(f"--epochs={epochs}")
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{framework} {name}: failed\n{done.stderr[-2000:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def busy_loop():
    """Start one CPU-bound competing process (stopped by the caller)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=[*FRAMEWORKS, "all"], default="all")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--library-only", action="store_true", help="time only d2lcore's own choice"
    )
    parser.add_argument(
        "--with-spinning",
        action="store_true",
        help="also 2 spin-waiting threads for PyTorch and MXNet (10-30 times slower on a busy machine)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        options = json.loads(args.worker)
        print(json.dumps(worker(args.framework, args.epochs, **options)))
        return
    frameworks = FRAMEWORKS if args.framework == "all" else [args.framework]
    names = {
        fw: [CHOSEN_BY_THE_LIBRARY]
        + [
            n
            for n in ([] if args.library_only else CANDIDATES[fw])
            if args.with_spinning or n != SPINNING
        ]
        for fw in frameworks
    }
    times = {(fw, n, c): [] for fw in frameworks for n in names[fw] for c in ("quiet", "loaded")}
    loads = {"quiet": [], "loaded": []}
    threads = {}
    for repeat in range(args.repeats):
        for condition in ("quiet", "loaded"):
            competitor = busy_loop() if condition == "loaded" else None
            try:
                if competitor:
                    time.sleep(2)  # let it take its core
                loads[condition].append(os.getloadavg()[0])
                for fw in frameworks:
                    for name in names[fw]:
                        result = run(fw, name, args.epochs)
                        if result:
                            times[(fw, name, condition)].append(result["seconds"])
                            threads[(fw, name)] = result["threads"]
                            print(
                                f"repeat {repeat + 1} {condition:<6} {fw:<10} {name:<24} "
                                f"{result['seconds']:6.2f} s  load {os.getloadavg()[0]:.2f}",
                                flush=True,
                            )
                loads[condition].append(os.getloadavg()[0])
            finally:
                if competitor:
                    competitor.kill()
                    competitor.wait()
    print(f"\n{args.epochs} epochs of the Bahdanau training, median of {args.repeats} (seconds)")
    print(
        f"1-min load average during the runs: quiet {min(loads['quiet']):.2f}-{max(loads['quiet']):.2f},"
        f" loaded {min(loads['loaded']):.2f}-{max(loads['loaded']):.2f}"
    )
    print(f"{'framework':<11}{'candidate':<25}{'quiet':>8}{'loaded':>8}{'ratio':>7}  threads")
    for fw in frameworks:
        for name in names[fw]:
            quiet, loaded = times[(fw, name, "quiet")], times[(fw, name, "loaded")]
            if not quiet or not loaded:
                continue
            q, lo = statistics.median(quiet), statistics.median(loaded)
            print(
                f"{fw:<11}{name:<25}{q:8.2f}{lo:8.2f}{lo / q:7.2f}  {threads.get((fw, name), '')}"
            )


if __name__ == "__main__":
    main()
