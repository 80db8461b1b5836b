"""Training and greedy translation of encoder–decoder models in PyTorch (section 4)."""

import torch

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
    dummy = torch.zeros((1, 1), dtype=torch.long, device=device)
    with torch.no_grad():
        net(dummy, dummy, torch.ones(1, dtype=torch.long, device=device))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


class ClippedAdam:
    """Adam (Kingma & Ba, 2015) on ``params``, each step after scaling the gradients so
    that their global norm is at most ``max_norm``: the numbers of
    nn.utils.clip_grad_norm_ followed by torch.optim.Adam (the same defaults and order of
    operations, so on the CPU the same weights bit for bit), with one call per operation
    for all the weights together (torch's multi-tensor ``_foreach`` operations), and
    without torch.optim: constructing its Adam imports the compiler (torch._dynamo), about
    1 s of every notebook that trains. ``step()`` uses the gradients that the last backward()
    left in the weights, then sets them to None, as Optimizer.zero_grad does."""

    def __init__(self, params, lr, max_norm, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.params = [p for p in params if p.requires_grad]
        self._means = [torch.zeros_like(p) for p in self.params]
        self._variances = [torch.zeros_like(p) for p in self.params]
        self.lr, self.max_norm = lr, max_norm
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.steps = 0

    @torch.no_grad()
    def step(self):
        # Only the weights that took part in the loss have a gradient (as torch.optim)
        used = [i for i, p in enumerate(self.params) if p.grad is not None]
        params = [self.params[i] for i in used]
        grads = [p.grad for p in params]
        means = [self._means[i] for i in used]
        variances = [self._variances[i] for i in used]
        # clip_grad_norm_: the factor min(1, max_norm / norm) stays on the device
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
        torch._foreach_mul_(grads, torch.clamp(self.max_norm / (norm + 1e-6), max=1.0))
        self.steps += 1
        beta1, beta2, t = self.beta1, self.beta2, self.steps
        torch._foreach_lerp_(means, grads, 1 - beta1)
        torch._foreach_mul_(variances, beta2)
        torch._foreach_addcmul_(variances, grads, grads, value=1 - beta2)
        denom = torch._foreach_sqrt(variances)
        # The bias corrections: of the variance here, of the mean in the step size
        torch._foreach_div_(denom, (1 - beta2**t) ** 0.5)
        torch._foreach_add_(denom, self.epsilon)
        step_size = self.lr / (1 - beta1**t)
        torch._foreach_addcdiv_(params, means, denom, value=-step_size)
        for p in params:
            p.grad = None


@checked
def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Train ``net`` (an EncoderDecoder) with Adam on the per-token cross-entropy.

    ``net`` is first (re)initialised (d2lcore.initialization). Each batch of
    ``data_iter``, (X, X_valid_len, Y, Y_valid_len), is a teacher-forced step: the decoder
    reads <bos> followed by Y[:, :-1] and must predict Y; the gradient's global norm is
    clipped to 1. Plots the loss every 10 epochs, shows the final loss and the speed
    (the record "training", see d2lcore.records), and returns the loss per token of
    every epoch."""
    net.to(device)
    _initialize(net, device)
    optimizer = ClippedAdam(net.parameters(), lr, max_norm=1)
    loss_fn = MaskedSoftmaxCELoss()
    animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
    bos = tgt_vocab["<bos>"]
    losses, total_tokens = [], 0
    net.train()
    timer = Timer()
    for epoch in range(num_epochs):
        # Sums stay on the device: reading one (.item()) at each batch would wait for the
        # device
        loss_sum = torch.zeros((), device=device)
        num_tokens = torch.zeros((), dtype=torch.long, device=device)
        for batch in data_iter:
            X, X_valid_len, Y, Y_valid_len = (t.to(device) for t in batch)
            # Teacher forcing: the decoder reads <bos>, then the target shifted by one
            bos_column = torch.full((Y.shape[0], 1), bos, dtype=Y.dtype, device=device)
            dec_input = torch.cat((bos_column, Y[:, :-1]), dim=1)
            Y_hat, _ = net(X, dec_input, X_valid_len)
            loss = loss_fn(Y_hat, Y, Y_valid_len).sum()  # over the batch's valid tokens
            tokens = Y_valid_len.sum()
            (loss / tokens).backward()  # the gradient of the loss per token
            optimizer.step()  # clips the gradient's global norm to 1, then Adam
            loss_sum += loss.detach()
            num_tokens += tokens
        losses.append((loss_sum / num_tokens).item())  # the one wait of the epoch
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
    num_steps)) for TransformerDecoder), if ``save_attention_weights``; else it is []."""
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    eos = tgt_vocab["<eos>"]
    net.eval()
    output, attention = [], []
    with torch.no_grad():
        enc_X = torch.tensor([src], dtype=torch.long, device=device)  # a batch of one
        enc_valid_len = torch.tensor([src_valid_len], device=device)
        enc_outputs = net.encoder(enc_X, enc_valid_len)
        state = net.decoder.init_state(enc_outputs, enc_valid_len)
        dec_X = torch.tensor([[tgt_vocab["<bos>"]]], dtype=torch.long, device=device)
        for _ in range(num_steps):
            Y, state = net.decoder(dec_X, state)
            dec_X = Y.argmax(dim=2)  # (1, 1): the most likely token is the next input
            token = int(dec_X[0, 0])
            if save_attention_weights:  # this step's weights (see last_query)
                attention.append(last_query(net.decoder.attention_weights))
            if token == eos:
                break
            output.append(token)
    return " ".join(tgt_vocab.to_tokens(output)), attention
