"""The learning-rate schedule of the Transformer in MXNet (Training a Transformer Well):
linear warmup, then decay with the inverse square root of the step. Vaswani et al., 2017,
"Attention is all you need", eq. 3."""

from mxnet import lr_scheduler

from .tensors import checked


@checked
class WarmupSchedule(lr_scheduler.LRScheduler):
    """base_lr * num_hiddens^-0.5 * min(t^-0.5, t * warmup_steps^-1.5) for update t = 1, 2,
    ...: it rises linearly for warmup_steps updates, peaks at t = warmup_steps, then falls as
    t^-0.5. Gluon's Trainer sets base_lr to its learning rate (1 gives the paper's rate) and
    calls the schedule with the number of the update it makes, 1 for the first: no update
    has rate 0. (MXNet's own linear warmup, LRScheduler's warmup_steps, is not used.)"""

    def __init__(self, num_hiddens, warmup_steps):
        super().__init__(base_lr=1.0)
        self.num_hiddens, self.warmup_steps = num_hiddens, warmup_steps

    def __call__(self, step):
        t = step  # Gluon counts the updates from 1, as the paper does
        rate = self.num_hiddens**-0.5 * min(t**-0.5, t * self.warmup_steps**-1.5)
        return self.base_lr * rate


__all__ = ["WarmupSchedule"]  # the names d2lcore.mxnet re-exports
