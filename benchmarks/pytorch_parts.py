"""Where a PyTorch training step goes, ours against the reference: the CPU time of each part of
one batch of the Bahdanau Attention and Transformer training pages, forward and backward,
each part alone on random inputs of the training's shapes (batch 64, 10 steps, the syllabus'
sizes, a target vocabulary of 189 tokens), in this process, on d2lcore's one thread.

CPU time (time.process_time), not wall time, so that other programs on the machine count less;
for each part the two sides alternate, median of --rounds rounds. The parts add up to about a
whole training batch (the checks and the data are not counted). The layers that both sides
share, PyTorch's nn.GRU, cost the same on both sides: they bound the ratio of the whole.

    .venv/bin/python benchmarks/pytorch_parts.py --model bahdanau
    .venv/bin/python benchmarks/pytorch_parts.py --model transformer --rounds 5
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from reference import in_pytorch as ref  # noqa: E402
from torch import nn  # noqa: E402

import d2lcore.torch as d2l  # noqa: E402

B, T, H, FFN, HEADS, V = 64, 10, 32, 64, 4, 189


def _cotangent(*shape):
    return torch.randn(*shape)


def _bahdanau_parts(lens):
    """{part: (ours, reference)}, each a function that runs the part forward and backward."""
    X = torch.randint(0, V, (B, T))
    enc_ours, enc_ref = d2l.Seq2SeqEncoder(V, 32, H, 2, 0.1), ref._GRUEncoder(V, 32, H, 2, 0.1)

    def encoder_ours():
        outputs, state = enc_ours(X)
        (outputs * _cotangent(B, T, H)).sum().add(state.sum()).backward()

    def encoder_ref():
        outputs, state = enc_ref(X)  # time-major
        (outputs * _cotangent(T, B, H)).sum().add(state.sum()).backward()

    gru = nn.GRU(2 * H, H, 2, dropout=0.1, batch_first=True)
    inputs = torch.randn(B, T, 2 * H, requires_grad=True)
    h0 = torch.randn(2, B, H, requires_grad=True)

    def decoder_gru():  # the same on both sides: one call per step
        hidden, outputs = h0, []
        for x in inputs.split(1, dim=1):
            out, hidden = gru(x, hidden)
            outputs.append(out)
        (torch.cat(outputs, dim=1) * _cotangent(B, T, H)).sum().backward()

    att_ours, att_ref = d2l.AdditiveAttention(H, 0.1), ref._Additive(H, 0.1)
    att_ours(torch.randn(B, 1, H), torch.randn(B, T, H), torch.randn(B, T, H))  # built
    enc = torch.randn(B, T, H, requires_grad=True)
    queries = torch.randn(B, T, H, requires_grad=True)

    def attention_ours():  # as the decoder: the layer at each step
        steps = [att_ours(q, enc, enc, lens) * _cotangent(B, 1, H) for q in queries.split(1, dim=1)]
        sum(s.sum() for s in steps).backward()

    def attention_ref():
        steps = [att_ref(q, enc, enc, lens) * _cotangent(B, 1, H) for q in queries.split(1, dim=1)]
        sum(s.sum() for s in steps).backward()

    net = ref.bahdanau_net(range(V), range(V), 32, H, 2, 0.1)
    return net, {
        "encoder: embedding, nn.GRU over 10 steps": (encoder_ours, encoder_ref),
        "decoder: nn.GRU, 10 one-step calls": (decoder_gru, decoder_gru),
        "decoder: additive attention, 10 steps": (attention_ours, attention_ref),
    }


def _transformer_parts(lens):
    X = torch.randn(B, T, H, requires_grad=True)
    Y = torch.randn(B, T, H, requires_grad=True)
    causal = torch.arange(1, T + 1).expand(B, T)
    mha_ours, mha_ref = d2l.MultiHeadAttention(H, HEADS, 0.1), ref._MultiHead(H, HEADS, 0.1)
    mha_ours(X, X, X, lens)  # built

    def attention(layer):
        def run():  # per layer: encoder self-, causal self- and cross-attention
            calls = [(X, X, X, lens), (X, X, X, causal), (X, Y, Y, lens)] * 2
            outputs = [layer(*args) for args in calls]
            sum((o * _cotangent(B, T, H)).sum() for o in outputs).backward()

        return run

    addnorm_ours, addnorm_ref = d2l.AddNorm(H, 0.1), ref._AddNorm(H, 0.1)
    addnorm_ours(X, Y)
    ffn_ours, ffn_ref = d2l.PositionWiseFFN(FFN, H), ref._FFN(H, FFN)
    ffn_ours(X)
    pos_ours, pos_ref = d2l.PositionalEncoding(H, 0.1), ref._Positions(H, 0.1)
    embedding, tokens = nn.Embedding(V, H), torch.randint(0, V, (B, T))

    def repeat(layer, times, *args):
        def run():
            sum((layer(*args) * _cotangent(B, T, H)).sum() for _ in range(times)).backward()

        return run

    def positions(layer):
        def run():  # encoder and decoder
            outputs = [layer(embedding(tokens) * H**0.5) for _ in range(2)]
            sum((o * _cotangent(B, T, H)).sum() for o in outputs).backward()

        return run

    net = ref.transformer_net(range(V), range(V), H, FFN, HEADS, 2, 0.1)
    return net, {
        "multi-head attention, 6 calls": (attention(mha_ours), attention(mha_ref)),
        "AddNorm, 10 calls": (repeat(addnorm_ours, 10, X, Y), repeat(addnorm_ref, 10, X, Y)),
        "position-wise FFN, 4 calls": (repeat(ffn_ours, 4, X), repeat(ffn_ref, 4, X)),
        "embeddings and positions, 2 calls": (positions(pos_ours), positions(pos_ref)),
    }


def parts(model):
    """{part: (ours, reference)} of one training batch of ``model``."""
    torch.manual_seed(0)
    lens = torch.randint(3, T + 1, (B,))
    net, found = (_bahdanau_parts if model == "bahdanau" else _transformer_parts)(lens)
    dense, hidden = nn.Linear(H, V), torch.randn(B, T, H, requires_grad=True)
    labels, label_lens = torch.randint(0, V, (B, T)), torch.randint(3, T + 1, (B,))
    loss = d2l.MaskedSoftmaxCELoss()

    def output_ours():
        (loss(dense(hidden), labels, label_lens).sum() / label_lens.sum()).backward()

    def output_ref():
        ref._loss(dense(hidden), labels, label_lens).sum().backward()

    found["output: dense layer and masked loss"] = (output_ours, output_ref)
    params = list(net.parameters())
    grads = [torch.randn_like(p) for p in params]
    ours = torch.optim.Adam(params, lr=0.005, fused=True)
    adam = torch.optim.Adam(params, lr=0.005)

    def optimizer_ours():  # as train_seq2seq
        ours.zero_grad()
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        nn.utils.clip_grad_norm_(params, 1)
        ours.step()

    def optimizer_ref():
        adam.zero_grad()
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        ref._clip(net, 1)
        adam.step()

    found[f"gradient clipping and Adam, {len(params)} tensors"] = (optimizer_ours, optimizer_ref)
    return found  # every layer was just built, so in training mode (dropout on)


def cpu_ms(function, calls):
    """CPU milliseconds per call of ``function``, after 10 calls to warm up."""
    for _ in range(10):
        function()
    start = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - start) / calls * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["bahdanau", "transformer"], required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100, help="calls per part and round")
    args = parser.parse_args()
    found = parts(args.model)
    times = {name: ([], []) for name in found}
    for _ in range(args.rounds):
        for name, (ours, reference) in found.items():
            times[name][0].append(cpu_ms(ours, args.calls))
            times[name][1].append(cpu_ms(reference, args.calls))
    print(f"== {args.model}, PyTorch: CPU ms per batch, median of {args.rounds} rounds ==")
    print(f"   {'part':45} {'ours':>7} {'D2L code':>10}")
    total = [0.0, 0.0]
    for name, sides in times.items():
        medians = [statistics.median(side) for side in sides]
        total = [t + m for t, m in zip(total, medians, strict=True)]
        print(f"   {name:45} {medians[0]:7.2f} {medians[1]:10.2f}")
    print(
        f"   {'sum':45} {total[0]:7.2f} {total[1]:10.2f}  (D2L's code / ours {total[1] / total[0]:.2f}x)"
    )
    print(f"   load average {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
