"""Training and greedy translation of encoder–decoder models in MXNet (section 4)."""

import math

from mxnet import autograd, nd, np

from d2lcore.convert import last_query
from d2lcore.initialization import xavier_uniform_weights
from d2lcore.plotting import Animator
from d2lcore.records import show_training
from d2lcore.text import encode_source
from d2lcore.timer import Timer

from .checks import checked
from .seq2seq import MaskedSoftmaxCELoss
from .weights import export_weights, load_weights


def _initialize(net, device):
    """The rule of d2lcore.initialization: Xavier-uniform weight matrices, zero biases.
    One call on a dummy batch first creates the weights whose sizes are inferred."""
    net.initialize(ctx=device, force_reinit=True)
    dummy = np.zeros((1, 1), dtype="int32", ctx=device)
    net(dummy, dummy, np.ones(1, dtype="int32", ctx=device))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


class ClippedAdam:
    """Adam (Kingma & Ba, 2015) on the weights of ``net``, each step after scaling the
    gradient so that its global norm is at most ``max_norm``: the update of
    gluon.utils.clip_global_norm followed by gluon.Trainer's "adam" (the same defaults,
    the bias correction folded into the learning rate), in a few operations for all the
    weights together instead of a few per weight, and without waiting for the engine. On
    a small model, MXNet spends most of a training step on launching operations.

    Create it after the weights are initialised (it keeps views of their arrays); each
    ``step()`` uses the gradients that the last backward() left in the weights, which
    must all take part in the loss (gluon.Trainer checks that; this does not). One
    difference: a gradient whose norm is not finite skips the step instead of writing
    NaN into the weights."""

    # multi_adamw_update's kernel holds at most 50 weights (more crash MXNet 1.9.1)
    _CHUNK = 50

    def __init__(self, net, lr, max_norm, beta1=0.9, beta2=0.999, epsilon=1e-8):
        params = [p for p in net.collect_params().values() if p.grad_req != "null"]
        # MXNet's multi-tensor operators take legacy arrays: as_nd_ndarray() gives views
        # of the same memory
        self._weights = [p.data().as_nd_ndarray() for p in params]
        self._grads = [p.grad().as_nd_ndarray() for p in params]
        self._means = [nd.zeros_like(w) for w in self._weights]
        self._variances = [nd.zeros_like(w) for w in self._weights]
        self.lr, self.max_norm = lr, max_norm
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.steps = 0

    def step(self):
        self.steps += 1
        grads = self._grads
        norm = nd.multi_sum_sq(*grads, num_arrays=len(grads)).sum().sqrt()
        # The factor of clip_global_norm, min(1, max_norm / norm), kept on the device
        scale = nd.minimum(self.max_norm / (norm + 1e-8), 1)
        t = self.steps
        lr = self.lr * math.sqrt(1 - self.beta2**t) / (1 - self.beta1**t)
        for i in range(0, len(grads), self._CHUNK):
            part = slice(i, i + self._CHUNK)
            n = len(grads[part])
            # AdamW without weight decay (wd 0, eta 1) is Adam, and it multiplies the
            # gradient by an array: scale
            nd.contrib.multi_adamw_update(
                self._weights[part],
                grads[part],
                self._means[part],
                self._variances[part],
                scale,
                lrs=(lr,) * n,
                wds=(0.0,) * n,
                etas=(1.0,) * n,
                beta1=self.beta1,
                beta2=self.beta2,
                epsilon=self.epsilon,
                out=self._weights[part],
            )


@checked
def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Train ``net`` (an EncoderDecoder) with Adam on the per-token cross-entropy.

    ``net`` is first (re)initialised (d2lcore.initialization). Each batch of
    ``data_iter``, (X (batch, steps), X_valid_len (batch,), Y (batch, tgt_steps),
    Y_valid_len (batch,)) as load_data_nmt gives, is a teacher-forced step: the decoder
    reads <bos> followed by Y[:, :-1] and must predict Y; the gradient's global norm is
    clipped to 1. Plots the loss every 10 epochs, shows the final loss and the speed
    (the record "training", see d2lcore.records), and returns the loss per token of
    every epoch."""
    _initialize(net, device)
    optimizer = ClippedAdam(net, lr, max_norm=1)
    loss_fn = MaskedSoftmaxCELoss()
    animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
    bos = tgt_vocab["<bos>"]
    losses, total_tokens = [], 0
    timer = Timer()
    for epoch in range(num_epochs):
        # Sums stay on the device: reading one (float()) would wait for MXNet's engine
        loss_sum, num_tokens = np.zeros((), ctx=device), np.zeros((), ctx=device)
        for batch in data_iter:
            X, X_valid_len, Y, Y_valid_len = (a.as_in_ctx(device) for a in batch)
            # Teacher forcing: the decoder reads <bos>, then the target shifted by one
            bos_column = np.full((Y.shape[0], 1), bos, dtype=Y.dtype, ctx=device)
            dec_input = np.concatenate((bos_column, Y[:, :-1]), axis=1)
            with autograd.record():  # also switches dropout on
                Y_hat, _ = net(X, dec_input, X_valid_len)
                loss = loss_fn(
                    Y_hat, Y, Y_valid_len
                ).sum()  # over the batch's valid tokens
                tokens = Y_valid_len.sum().astype(loss.dtype)
                per_token = loss / tokens
            per_token.backward()  # the gradient of the loss per token
            optimizer.step()  # clips the gradient's global norm to 1, then Adam
            loss_sum = loss_sum + loss
            num_tokens = num_tokens + tokens
        losses.append(float(loss_sum / num_tokens))  # the one wait of the epoch
        total_tokens += int(num_tokens)
        # a point every 10 epochs; at most 10 drawings (about 50 ms each in a notebook)
        animator.add_epoch(epoch + 1, num_epochs, losses[-1])
    seconds = timer.stop()
    show_training(losses, total_tokens, seconds, device)
    return losses


@checked
def predict_seq2seq(
    net,
    src_sentence,
    src_vocab,
    tgt_vocab,
    num_steps,
    device,
    save_attention_weights=False,
):
    """Greedy translation of one sentence by ``net`` (an EncoderDecoder on ``device``).

    The sentence is cleaned like the corpus (lowercase, a space before , . ! ?), ends with
    <eos> and is cut or padded to ``num_steps`` tokens. Starting from <bos>, the decoder
    emits its most likely token each step, until <eos> or ``num_steps`` tokens. Returns
    (translation, attention): ``attention`` lists, for every step (the <eos> step
    included), the decoder's attention weights of that step as NumPy (``last_query``:
    (num_steps,) source weights for Seq2SeqAttentionDecoder, a pair (self-attention
    (num_layers, num_heads, step + 1), encoder–decoder attention (num_layers, num_heads,
    num_steps)) for TransformerDecoder), if ``save_attention_weights``; else it is []. Outside
    ``autograd.record()`` MXNet runs in evaluation mode (no dropout)."""
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    eos = tgt_vocab["<eos>"]
    output, attention = [], []
    enc_X = np.array([src], dtype="int32", ctx=device)  # a batch of one
    enc_valid_len = np.array([src_valid_len], dtype="int32", ctx=device)
    enc_outputs = net.encoder(enc_X, enc_valid_len)
    state = net.decoder.init_state(enc_outputs, enc_valid_len)
    dec_X = np.array([[tgt_vocab["<bos>"]]], dtype="int32", ctx=device)
    for _ in range(num_steps):
        Y, state = net.decoder(dec_X, state)
        dec_X = Y.argmax(axis=2)  # (1, 1): the most likely token is the next input
        token = int(dec_X[0, 0])
        if save_attention_weights:  # this step's weights (see last_query)
            attention.append(last_query(net.decoder.attention_weights))
        if token == eos:
            break
        output.append(token)
    return " ".join(tgt_vocab.to_tokens(output)), attention
