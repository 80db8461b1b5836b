"""The learning-rate schedule of the Transformer in TensorFlow (Training a Transformer Well):
linear warmup, then decay with the inverse square root of the step. Vaswani et al., 2017,
"Attention is all you need", eq. 3."""

import keras

from .tensors import checked


@checked
class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """num_hiddens^-0.5 * min(t^-0.5, t * warmup_steps^-1.5) for update t = 1, 2, ...: it
    rises linearly for warmup_steps updates, peaks at t = warmup_steps, then falls as
    t^-0.5. A Keras optimizer given it as its learning rate calls it with its
    ``iterations``, the number of updates done so far, 0 before the first: so t = step + 1,
    and no update has rate 0."""

    def __init__(self, num_hiddens, warmup_steps):
        super().__init__()
        self.num_hiddens, self.warmup_steps = num_hiddens, warmup_steps

    def __call__(self, step):
        t = keras.ops.cast(step, "float32") + 1  # Keras counts from 0, the paper from 1
        rate = keras.ops.minimum(t**-0.5, t * self.warmup_steps**-1.5)
        return self.num_hiddens**-0.5 * rate

    def get_config(self):
        return {"num_hiddens": self.num_hiddens, "warmup_steps": self.warmup_steps}


__all__ = ["WarmupSchedule"]  # the names d2lcore.tensorflow re-exports
