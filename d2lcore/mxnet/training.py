"""Training of encoder–decoder models in MXNet (Sequence-to-Sequence Toolkit); their
translation is in decoding.py."""

from mxnet import autograd, gluon, np

from d2lcore.initialization import xavier_uniform_weights
from d2lcore.plotting import Animator
from d2lcore.records import show_training
from d2lcore.timer import Timer

from .seq2seq import MaskedSoftmaxCELoss
from .tensors import checked
from .weights import export_weights, load_weights


def _initialize(net, device):
    """d2lcore.initialization's rule; a call on a dummy batch first creates lazy weights."""
    net.initialize(ctx=device, force_reinit=True)
    dummy = np.zeros((1, 1), dtype="int32", ctx=device)
    net(dummy, dummy, np.ones(1, dtype="int32", ctx=device))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


@checked
def train_seq2seq(
    net, data_iter, lr, num_epochs, tgt_vocab, device, schedule=None, loss_fn=None
):
    """Train ``net`` (an EncoderDecoder), first reinitialised by d2lcore.initialization's
    rule, with Adam on the loss per token, teacher-forced, the gradient's global norm
    clipped to 1. Batches: (X (batch, steps), X_valid_len (batch,), Y (batch, steps),
    Y_valid_len (batch,)). ``schedule``: None (the rate lr throughout) or an
    mx.lr_scheduler.LRScheduler, such as WarmupSchedule, whose base_lr the Trainer sets to
    lr. ``loss_fn``: the masked loss, loss_fn(pred, label, valid_len) -> (batch,) sums per
    sequence; MaskedSoftmaxCELoss() if None. Shows the record "training"; returns the loss
    per token of every epoch."""
    _initialize(net, device)
    net.hybridize(static_alloc=True)  # each HybridBlock inside runs as a cached graph
    params = net.collect_params()
    settings = {"learning_rate": lr}
    if schedule is not None:  # the rate of update t (1, 2, ...): schedule(t)
        settings["lr_scheduler"] = schedule
    trainer = gluon.Trainer(params, "adam", settings)
    # clip_global_norm takes legacy arrays: as_nd_ndarray() gives views of the gradients
    grads = [p.grad().as_nd_ndarray() for p in params.values()]
    loss_fn = MaskedSoftmaxCELoss() if loss_fn is None else loss_fn
    animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
    bos = tgt_vocab["<bos>"]
    losses, total_tokens = [], 0
    timer = Timer()
    for epoch in range(num_epochs):
        # The epoch's summed loss and number of target tokens, kept as arrays
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
            # The gradient's global norm at most 1 (check_isfinite=False: the norm is not
            # checked for inf or NaN)
            gluon.utils.clip_global_norm(grads, 1, check_isfinite=False)
            trainer.step(1)  # Adam; 1: the loss is already per token
            loss_sum = loss_sum + loss
            num_tokens = num_tokens + tokens
        losses.append(float(loss_sum / num_tokens))  # the epoch's loss per token
        total_tokens += int(num_tokens)
        animator.add_epoch(epoch + 1, num_epochs, losses[-1])
    seconds = timer.stop()
    show_training(losses, total_tokens, seconds, device)
    return losses


__all__ = ["train_seq2seq"]  # the names d2lcore.mxnet re-exports
