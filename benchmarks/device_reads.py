"""How often a PyTorch training step waits on the device: the reads of tensor values by the host, counted on the
CPU, and on a GPU also the synchronisations that PyTorch itself reports.

On a GPU every read of a tensor's value by Python (``.item()``, ``.cpu()``, ``.tolist()``, ``bool()``, ``int()``,
``float()``) waits until the device has finished everything queued before it. This script trains the pages'
Bahdanau and Transformer models with ``d2l.train_seq2seq`` for 1 and for 3 epochs, counting those calls, and
prints the reads per training step (batch) of the difference, so that what happens once (initialisation) does not
count and what happens once per epoch (reading its loss) is shared by its steps. On a CPU the copies of a batch to
the device are no reads. With ``--device gpu`` on a machine with CUDA the models train on the GPU, and the script
also counts the synchronisations that ``torch.cuda.set_sync_debug_mode("warn")`` reports (the batch's copies to
the device among them), by the line that made them, and the milliseconds per step.

    .venv/bin/python benchmarks/device_reads.py
    python3 benchmarks/device_reads.py --device gpu      # on a GPU machine
"""

import argparse
import collections
import contextlib
import io
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch

from d2lcore import torch as d2l

READS = ("item", "cpu", "tolist", "__bool__", "__int__", "__float__", "__index__")


def place(filename, lineno):
    """``d2lcore/torch/x.py:12`` for a file of d2lcore, wherever d2lcore is installed; None for another file."""
    parts = Path(filename).parts
    if "d2lcore" not in parts:
        return None
    return f"{'/'.join(parts[len(parts) - parts[::-1].index('d2lcore') - 1 :])}:{lineno}"


@contextlib.contextmanager
def counting():
    """Count the host reads of tensor values in the block, by method and by the d2lcore line that made them."""
    counts, where = collections.Counter(), collections.Counter()
    originals = {name: getattr(torch.Tensor, name) for name in READS}

    def wrap(name, method):
        def read(self, *args, **kwargs):
            counts[name] += 1
            for frame in reversed(traceback.extract_stack(limit=12)[:-1]):
                if (at := place(frame.filename, frame.lineno)) is not None:
                    where[at] += 1
                    break
            return method(self, *args, **kwargs)

        return read

    for name, method in originals.items():
        setattr(torch.Tensor, name, wrap(name, method))
    try:
        yield counts, where
    finally:
        for name, method in originals.items():
            setattr(torch.Tensor, name, method)


@contextlib.contextmanager
def cuda_syncs(enabled):
    """Count, by line, the synchronisations that ``torch.cuda.set_sync_debug_mode("warn")`` reports in the
    block (nothing when ``enabled`` is false)."""
    where = collections.Counter()
    if not enabled:
        yield where
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            yield where
        finally:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("default")
    for w in caught:
        if "synchroniz" in str(w.message):
            where[place(w.filename, w.lineno) or f"{Path(w.filename).name}:{w.lineno}"] += 1


def model(kind, src_vocab, tgt_vocab):
    """The page's model: ``bahdanau`` or ``transformer``."""
    if kind == "bahdanau":
        encoder = d2l.Seq2SeqEncoder(len(src_vocab), 32, 32, 2, 0.1)
        decoder = d2l.Seq2SeqAttentionDecoder(len(tgt_vocab), 32, 32, 2, 0.1)
    else:
        encoder = d2l.TransformerEncoder(len(src_vocab), 32, 64, 4, 2, 0.1)
        decoder = d2l.TransformerDecoder(len(tgt_vocab), 32, 64, 4, 2, 0.1)
    return d2l.EncoderDecoder(encoder, decoder)


def reads(kind, epochs, device):
    """Train the page's ``kind`` model for ``epochs`` epochs on ``device``: (host reads by method, host reads by
    line, CUDA synchronisations by line, seconds, steps per epoch)."""
    d2l.set_seed(1)
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(64, 10)
    net = model(kind, src_vocab, tgt_vocab)
    cuda = device.type == "cuda"
    with counting() as (counts, where), cuda_syncs(cuda) as syncs:
        with contextlib.redirect_stdout(io.StringIO()):
            start = time.perf_counter()
            d2l.train_seq2seq(net, train_iter, 0.005, epochs, tgt_vocab, device)
            if cuda:
                torch.cuda.synchronize()
            seconds = time.perf_counter() - start
    return counts, where, syncs, seconds, sum(1 for _ in train_iter)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    args = parser.parse_args()
    device = d2l.try_gpu() if args.device == "gpu" else d2l.cpu()
    if args.device == "gpu" and device.type != "cuda":
        sys.exit("--device gpu: torch.cuda finds no GPU")
    print(
        f"torch {torch.__version__} on {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}"
    )
    for kind in ("bahdanau", "transformer"):
        # A warm-up run: what happens once per process does not count in the times
        reads(kind, 1, device)
        counts_1, where_1, syncs_1, seconds_1, batches = reads(kind, 1, device)
        counts_3, where_3, syncs_3, seconds_3, _ = reads(kind, 3, device)
        steps = 2 * batches
        total = sum(counts_3.values()) - sum(counts_1.values())
        print(f"{kind}: {total / steps:.1f} host reads per training step ({steps} steps counted)")
        for at, n in (where_3 - where_1).most_common():
            print(f"   {n / steps:5.1f}  {at}")
        print(f"   by kind: { {k: (counts_3[k] - counts_1[k]) / steps for k in counts_3} }")
        if device.type == "cuda":
            syncs = sum(syncs_3.values()) - sum(syncs_1.values())
            print(
                f"   {syncs / steps:.1f} CUDA synchronisations per step (set_sync_debug_mode), by line:"
            )
            for at, n in (syncs_3 - syncs_1).most_common():
                print(f"   {n / steps:5.1f}  {at}")
        print(f"   {(seconds_3 - seconds_1) / steps * 1000:.1f} ms per step")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
