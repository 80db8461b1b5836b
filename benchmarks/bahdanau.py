"""Time the book's Bahdanau-attention training run in each framework, and score its translations.

The run of section "Bahdanau Attention": the first 600 pairs of the project's English–French
corpus, batch 64, 10 steps, embedding 32, 32 hidden units, 2 GRU layers, dropout 0.1, Adam with
learning rate 0.005, 250 epochs, on d2l.try_gpu(). Each framework runs in a fresh Python process,
with the environment of the book's Jupyter kernel for that framework (booktools/kernels.py), so
that imports do not interfere; the threads are d2lcore's choice (d2lcore/threads.py: one per
operation unless D2L_NUM_THREADS or the framework's own variables say otherwise), made when the
framework's d2lcore module is imported, as in any notebook.

    .venv/bin/python benchmarks/bahdanau.py                       # all three frameworks
    .venv/bin/python benchmarks/bahdanau.py --framework pytorch --epochs 50

Prints, per framework: the wall time of train_seq2seq, its tokens/s and final loss per token,
the four translations with their BLEU (k = 2), and the load average before and after (the
timings mean little on a machine that other work keeps busy).
"""

import argparse
import importlib
import json

from seq2seq_run import SEED, measure_training, report_training, run_worker

from d2lcore import FRAMEWORKS, MODULE_OF


def run_one(framework, epochs, seed):
    """The run itself, in this process; returns the figures as a dict."""
    d2l = importlib.import_module(MODULE_OF[framework])
    embed_size, num_hiddens, num_layers, dropout = 32, 32, 2, 0.1
    batch_size, num_steps, lr = 64, 10, 0.005
    d2l.set_seed(seed)
    device = d2l.try_gpu()
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(batch_size, num_steps)
    encoder = d2l.Seq2SeqEncoder(len(src_vocab), embed_size, num_hiddens, num_layers, dropout)
    decoder = d2l.Seq2SeqAttentionDecoder(
        len(tgt_vocab), embed_size, num_hiddens, num_layers, dropout
    )
    net = d2l.EncoderDecoder(encoder, decoder)
    result = measure_training(
        d2l, net, train_iter, src_vocab, tgt_vocab, lr, epochs, num_steps, device
    )
    return {"framework": framework, **result}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=[*FRAMEWORKS, "all"], default="all")
    parser.add_argument("--epochs", type=int, default=250)
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed ({SEED}, as the pages)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="set OMP_NUM_THREADS for every framework (default: as in the book's kernels)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the child process: one framework, result as JSON on the last line
        print(json.dumps(run_one(args.framework, args.epochs, args.seed)))
        return
    frameworks = FRAMEWORKS if args.framework == "all" else [args.framework]
    for framework in frameworks:
        arguments = ["--worker", f"--epochs={args.epochs}", f"--seed={args.seed}"]
        result = run_worker(__file__, framework, arguments, args.threads)
        if result is not None:
            print(f"== {framework} ({result['epochs']} epochs) ==")
            report_training(result)


if __name__ == "__main__":
    main()
