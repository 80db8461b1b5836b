"""Training of encoder–decoder models in TensorFlow (Sequence-to-Sequence Toolkit)."""

import keras
import tensorflow as tf

from d2lcore.initialization import xavier_uniform_weights
from d2lcore.plotting import Animator
from d2lcore.records import show_training
from d2lcore.timer import Timer

from .seq2seq import MaskedSoftmaxCELoss
from .tensors import checked
from .weights import export_weights, load_weights


def _initialize(net):
    """d2lcore.initialization's rule; a call on a dummy batch first creates lazy weights."""
    dummy = tf.zeros((1, 1), dtype=tf.int32)
    net(dummy, dummy, tf.ones(1, dtype=tf.int32))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


class _Scaled(keras.optimizers.schedules.LearningRateSchedule):
    """lr times ``schedule``'s rate: the learning rate of train_seq2seq with a schedule."""

    def __init__(self, schedule, lr):
        super().__init__()
        self.schedule, self.lr = schedule, lr

    def __call__(self, step):
        return self.lr * self.schedule(step)


def _device_name(device):
    """The name for tf.device of a tf.config.LogicalDevice or a str such as "/GPU:0"."""
    return device if isinstance(device, str) else device.name


def _make_train_step(net, optimizer, loss_fn, bos, batch):
    """The compiled step for batches like ``batch``, of any batch size (no new tracing)."""
    signature = [tf.TensorSpec((None, *a.shape[1:]), a.dtype) for a in batch]
    optimizer.build(net.trainable_variables)  # Adam's variables now: no second trace

    @tf.function(input_signature=signature)
    def train_step(X, X_valid_len, Y, Y_valid_len):
        # Teacher forcing: the decoder reads <bos>, then the target shifted by one
        bos_column = tf.fill((tf.shape(Y)[0], 1), tf.constant(bos, Y.dtype))
        dec_input = tf.concat((bos_column, Y[:, :-1]), axis=1)
        with tf.GradientTape() as tape:
            Y_hat, _ = net(X, dec_input, X_valid_len, training=True)
            loss = tf.reduce_sum(loss_fn(Y_hat, Y, Y_valid_len))  # over the valid tokens
            tokens = tf.cast(tf.reduce_sum(Y_valid_len), loss.dtype)
            per_token = loss / tokens
        # The gradient of the loss per token: its global norm clipped to 1, then Adam
        grads = tape.gradient(per_token, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss, tokens

    return train_step.get_concrete_function()  # the traced graph, which the loop calls


@checked
def train_seq2seq(
    net, data_iter, lr, num_epochs, tgt_vocab, device, schedule=None, loss_fn=None
):
    """Train ``net`` (an EncoderDecoder), first reinitialised by d2lcore.initialization's
    rule, with Adam on the loss per token, teacher-forced, the gradient's global norm
    clipped to 1. Batches: (X (batch, steps), X_valid_len (batch,), Y (batch, steps),
    Y_valid_len (batch,)). ``schedule``: None (the rate lr throughout) or a Keras
    LearningRateSchedule, such as WarmupSchedule: update t then has the rate lr *
    schedule(t - 1). ``loss_fn``: the masked loss, loss_fn(pred, label, valid_len) ->
    (batch,) sums per sequence; MaskedSoftmaxCELoss() if None. Shows the record
    "training"; returns the loss per token of every epoch."""
    with tf.device(_device_name(device)):
        _initialize(net)
        rate = lr if schedule is None else _Scaled(schedule, lr)
        optimizer = keras.optimizers.Adam(learning_rate=rate, global_clipnorm=1)
        loss_fn = MaskedSoftmaxCELoss() if loss_fn is None else loss_fn
        animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
        train_step = None
        losses, total_tokens = [], 0
        timer = Timer()
        for epoch in range(num_epochs):
            # The epoch's summed loss and number of target tokens, kept as tensors
            loss_sum, num_tokens = tf.zeros(()), tf.zeros(())
            for batch in data_iter:
                if train_step is None:
                    bos = tgt_vocab["<bos>"]
                    train_step = _make_train_step(net, optimizer, loss_fn, bos, batch)
                loss, tokens = train_step(*batch)
                loss_sum, num_tokens = loss_sum + loss, num_tokens + tokens
            losses.append(float(loss_sum / num_tokens))  # the epoch's loss per token
            total_tokens += int(num_tokens)
            animator.add_epoch(epoch + 1, num_epochs, losses[-1])
        seconds = timer.stop()
    short_name = _device_name(device).rsplit("device:", 1)[-1]  # e.g. CPU:0
    show_training(losses, total_tokens, seconds, short_name)
    return losses


__all__ = ["train_seq2seq"]  # the names d2lcore.tensorflow re-exports
