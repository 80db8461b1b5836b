"""How often a PyTorch training step waits on the device: the reads of tensor values by the host, counted on the CPU.

On a GPU every read of a tensor's value by Python (``.item()``, ``.cpu()``, ``.tolist()``, ``bool()``, ``int()``,
``float()``) waits until the device has finished everything queued before it. This script trains the pages'
Bahdanau and Transformer models with ``d2l.train_seq2seq`` for 1 and for 3 epochs, counting those calls, and
prints the reads per training step (batch) of the difference, so that what happens once (initialisation) does not
count and what happens once per epoch (reading its loss) is shared by its steps. On a CPU the copies of a batch to
the device are no reads; on a GPU each batch adds its copies (4 tensors), which
``torch.cuda.set_sync_debug_mode("warn")`` would count too.

    .venv/bin/python benchmarks/device_reads.py
"""

import collections
import contextlib
import io
import sys
import traceback
from pathlib import Path

import torch

from d2lcore import torch as d2l

READS = ("item", "cpu", "tolist", "__bool__", "__int__", "__float__", "__index__")
ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def counting():
    """Count the host reads of tensor values in the block, by method and by the d2lcore line that made them."""
    counts, where = collections.Counter(), collections.Counter()
    originals = {name: getattr(torch.Tensor, name) for name in READS}

    def wrap(name, method):
        def read(self, *args, **kwargs):
            counts[name] += 1
            for frame in reversed(traceback.extract_stack(limit=12)[:-1]):
                if "d2lcore" in frame.filename:
                    where[f"{Path(frame.filename).relative_to(ROOT)}:{frame.lineno}"] += 1
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


def model(kind, src_vocab, tgt_vocab):
    """The page's model: ``bahdanau`` or ``transformer``."""
    if kind == "bahdanau":
        encoder = d2l.Seq2SeqEncoder(len(src_vocab), 32, 32, 2, 0.1)
        decoder = d2l.Seq2SeqAttentionDecoder(len(tgt_vocab), 32, 32, 2, 0.1)
    else:
        encoder = d2l.TransformerEncoder(len(src_vocab), 32, 64, 4, 2, 0.1)
        decoder = d2l.TransformerDecoder(len(tgt_vocab), 32, 64, 4, 2, 0.1)
    return d2l.EncoderDecoder(encoder, decoder)


def reads(kind, epochs):
    """The host reads while training the page's ``kind`` model for ``epochs`` epochs, and the steps per epoch."""
    d2l.set_seed(1)
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(64, 10)
    net = model(kind, src_vocab, tgt_vocab)
    with counting() as (counts, where), contextlib.redirect_stdout(io.StringIO()):
        d2l.train_seq2seq(net, train_iter, 0.005, epochs, tgt_vocab, d2l.cpu())
    return counts, where, sum(1 for _ in train_iter)


def main():
    for kind in ("bahdanau", "transformer"):
        counts_1, where_1, batches = reads(kind, 1)
        counts_3, where_3, _ = reads(kind, 3)
        steps = 2 * batches
        total = sum(counts_3.values()) - sum(counts_1.values())
        print(f"{kind}: {total / steps:.1f} host reads per training step ({steps} steps counted)")
        for place, n in (where_3 - where_1).most_common():
            print(f"   {n / steps:5.1f}  {place}")
        print(f"   by kind: { {k: (counts_3[k] - counts_1[k]) / steps for k in counts_3} }")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
