"""Training of encoder–decoder models in PyTorch (Sequence-to-Sequence Toolkit)."""

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

from d2lcore.initialization import xavier_uniform_weights
from d2lcore.plotting import Animator
from d2lcore.records import show_training
from d2lcore.timer import Timer

from .seq2seq import MaskedSoftmaxCELoss
from .tensors import checked
from .weights import export_weights, load_weights


def _initialize(net, device):
    """d2lcore.initialization's rule; a call on a dummy batch first creates lazy weights."""
    dummy = torch.zeros((1, 1), dtype=torch.long, device=device)
    with torch.no_grad():
        net(dummy, dummy, torch.ones(1, dtype=torch.long, device=device))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


@checked
def train_seq2seq(
    net, data_iter, lr, num_epochs, tgt_vocab, device, schedule=None, loss_fn=None
):
    """Train ``net`` (an EncoderDecoder), first reinitialised by d2lcore.initialization's
    rule, with Adam on the loss per token, teacher-forced, the gradient's global norm
    clipped to 1. Batches: (X (batch, steps), X_valid_len (batch,), Y (batch, steps),
    Y_valid_len (batch,)). ``schedule``: None (the rate lr throughout) or a factor for
    LambdaLR, such as WarmupSchedule: update t then has the rate lr * schedule(t - 1).
    ``loss_fn``: the masked loss, loss_fn(pred, label, valid_len) -> (batch,) sums per
    sequence; MaskedSoftmaxCELoss() if None. Shows the record "training"; returns the loss
    per token of every epoch."""
    net.to(device)
    _initialize(net, device)
    # fused=True: the same Adam update, computed in fewer, larger operations
    optimizer = torch.optim.Adam(net.parameters(), lr, fused=True)
    # The learning rate of each update: lr times the schedule's factor (LambdaLR)
    scheduler = None if schedule is None else LambdaLR(optimizer, schedule)
    loss_fn = MaskedSoftmaxCELoss() if loss_fn is None else loss_fn
    animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
    bos = tgt_vocab["<bos>"]
    losses, total_tokens = [], 0
    net.train()
    timer = Timer()
    for epoch in range(num_epochs):
        # The epoch's summed loss and number of target tokens, kept as tensors
        loss_sum = torch.zeros((), device=device)
        num_tokens = torch.zeros((), dtype=torch.long, device=device)
        for batch in data_iter:
            X, X_valid_len, Y, Y_valid_len = (t.to(device) for t in batch)
            # Teacher forcing: the decoder reads <bos>, then the target shifted by one
            bos_column = torch.full((Y.shape[0], 1), bos, dtype=Y.dtype, device=device)
            dec_input = torch.cat((bos_column, Y[:, :-1]), dim=1)
            optimizer.zero_grad()
            Y_hat, _ = net(X, dec_input, X_valid_len)
            loss = loss_fn(Y_hat, Y, Y_valid_len).sum()  # over the batch's valid tokens
            tokens = Y_valid_len.sum()
            (loss / tokens).backward()  # the gradient of the loss per token
            nn.utils.clip_grad_norm_(net.parameters(), 1)  # its global norm at most 1
            optimizer.step()
            if scheduler is not None:
                scheduler.step()  # the next update's rate
            loss_sum += loss.detach()
            num_tokens += tokens
        losses.append((loss_sum / num_tokens).item())  # the epoch's loss per token
        total_tokens += int(num_tokens)
        animator.add_epoch(epoch + 1, num_epochs, losses[-1])
    seconds = timer.stop()
    show_training(losses, total_tokens, seconds, device)
    return losses


__all__ = ["train_seq2seq"]  # the names d2lcore.torch re-exports
