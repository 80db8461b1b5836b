"""The learning-rate schedule of the Transformer in PyTorch (Training a Transformer Well):
linear warmup, then decay with the inverse square root of the step. Vaswani et al., 2017,
"Attention is all you need", eq. 3."""

from .tensors import checked


@checked
class WarmupSchedule:
    """num_hiddens^-0.5 * min(t^-0.5, t * warmup_steps^-1.5) for update t = 1, 2, ...: it
    rises linearly for warmup_steps updates, peaks at t = warmup_steps, then falls as
    t^-0.5. A factor for ``torch.optim.lr_scheduler.LambdaLR``, which multiplies the
    optimizer's learning rate by it (1 gives the paper's rate) and calls it with the number
    of updates done so far, 0 before the first: so t = step + 1, and no update has rate 0."""

    def __init__(self, num_hiddens, warmup_steps):
        self.num_hiddens, self.warmup_steps = num_hiddens, warmup_steps

    def __call__(self, step):
        t = step + 1  # LambdaLR counts from 0, the paper from 1
        return self.num_hiddens**-0.5 * min(t**-0.5, t * self.warmup_steps**-1.5)


__all__ = ["WarmupSchedule"]  # the names d2lcore.torch re-exports
