"""Nadaraya–Watson kernel regression with a learnable kernel width, in MXNet
(Attention Pooling: Nadaraya–Watson Kernel Regression)."""

from mxnet import autograd, gluon, init, np, npx
from mxnet.gluon import nn

from d2lcore.plotting import Animator

from .tensors import checked


@checked
class NWKernelRegression(nn.Block):
    """f(x) = sum_i softmax_i(-((x - x_i) w)^2 / 2) y_i, with one learnable scalar w
    (initialised to 1).

    queries (n,); keys, values (n, m): the m key-value pairs that query i attends to ->
    (n,)."""

    def __init__(self):
        super().__init__()
        self.w = self.params.get("w", shape=(1,), init=init.One())
        self.attention_weights = None

    def forward(self, queries, keys, values):
        queries = queries.reshape(-1, 1)  # (n, 1): broadcasts against its row of keys
        self.attention_weights = npx.softmax(
            -(((queries - keys) * self.w.data()) ** 2) / 2, axis=1
        )  # (n, m)
        # (n, 1, m) x (n, m, 1) -> (n, 1, 1): one weighted average of values per query
        return npx.batch_dot(
            np.expand_dims(self.attention_weights, 1), np.expand_dims(values, -1)
        ).reshape(-1)


@checked
def train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    """Full-batch SGD on the loss sum_i (f(x_i) - y_i)^2 / 2; returns the loss of each
    epoch, taken before its update. queries, targets: (n,); keys, values: (n, m)."""
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    animator = Animator(xlabel="epoch", ylabel="loss", xlim=[1, num_epochs])
    losses = []
    for epoch in range(num_epochs):
        with autograd.record():
            loss = ((net(queries, keys, values) - targets) ** 2 / 2).sum()
        loss.backward()
        trainer.step(1)  # 1: apply the gradient of the summed loss as it is
        losses.append(float(loss))
        animator.add(epoch + 1, losses[-1])
    return losses


__all__ = ["NWKernelRegression", "train_nw"]  # the names d2lcore.mxnet re-exports
