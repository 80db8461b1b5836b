"""Nadaraya–Watson kernel regression with a learnable kernel width, in TensorFlow
(Attention Pooling: Nadaraya–Watson Kernel Regression)."""

import keras
import tensorflow as tf

from d2lcore.plotting import Animator

from .layers import Layer
from .tensors import checked


@checked
class NWKernelRegression(Layer):
    """f(x) = sum_i softmax_i(-((x - x_i) w)^2 / 2) y_i, with one learnable scalar w
    (initialised to 1). queries (n,); keys, values (n, m): the m key-value pairs that
    query i attends to -> (n,)."""

    def __init__(self):
        super().__init__()
        self.w = self.add_weight(name="w", shape=(1,), initializer="ones")
        self.attention_weights = None

    def call(self, queries, keys, values):
        queries = tf.reshape(
            queries, (-1, 1)
        )  # (n, 1): broadcasts against its row of keys
        self.attention_weights = tf.nn.softmax(
            -(((queries - keys) * self.w) ** 2) / 2, axis=1
        )  # (n, m)
        # (n, 1, m) x (n, m, 1) -> (n, 1, 1): one weighted average of values per query
        return tf.reshape(
            tf.matmul(self.attention_weights[:, None, :], values[:, :, None]), (-1,)
        )


@checked
def train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    """Full-batch SGD on the loss sum_i (f(x_i) - y_i)^2 / 2; returns the loss of each
    epoch, taken before its update. queries, targets: (n,); keys, values: (n, m)."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    animator = Animator(xlabel="epoch", ylabel="loss", xlim=[1, num_epochs])
    losses = []
    for epoch in range(num_epochs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((net(queries, keys, values) - targets) ** 2 / 2)
        grads = tape.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        losses.append(float(loss))
        animator.add(epoch + 1, losses[-1])
    return losses


__all__ = ["NWKernelRegression", "train_nw"]  # the names d2lcore.tensorflow re-exports
