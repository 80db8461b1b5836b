"""The reference implementation's training-loop structure, re-implemented here from the
syllabus' description (../shared/SYLLABUS.md beside the repository, sections 1.4, 1.7, 2.1
and 2.3) so that benchmarks can run it side by side with d2lcore: same hyperparameters, same data, same
number of epochs. Written for this project; none of the reference's code is copied.

What makes it the reference's structure, in every framework:
- the Bahdanau decoder calls its additive attention (projecting the keys again) and its
  GRU once per target step, time-major, in a Python loop;
- masked softmax by writing -1e6 into the masked scores (a boolean index in PyTorch,
  npx.sequence_mask in MXNet, tf.where in TensorFlow);
- the Transformer decoder's causal mask is a (batch, steps) matrix built in Python mode,
  and inference adds the positional encoding of position 0 to every step (the
  reference's bug, kept: it decides the translations);
- the loss is the masked cross-entropy averaged over all num_steps (padding counts as 0);
  PyTorch and TensorFlow take the gradient of its sum over the batch, MXNet divides the
  gradient by the number of tokens in trainer.step; gradient clipping to norm 1 reads the
  norm on the host; the loss and token counts are read on the host at every batch;
- TensorFlow runs eagerly (no tf.function), MXNet's blocks are not hybridised.

One module per framework (in_pytorch, in_tensorflow, in_mxnet), each with
``bahdanau_net``, ``transformer_net``, ``train_seq2seq`` and ``predict_seq2seq``.
"""


class LossCurve:
    """The reference's training loop redraws its loss curve every 10 epochs (in a notebook it
    also displays it; in a script, as here and as d2lcore's Animator, it only draws)."""

    def __init__(self, num_epochs):
        import matplotlib

        matplotlib.use("agg")
        import matplotlib.pyplot as plt

        self.fig, self.axes = plt.subplots(figsize=(3.5, 2.5))
        plt.close(self.fig)
        self.num_epochs, self.X, self.Y = num_epochs, [], []

    def add(self, epoch, loss):
        self.X.append(epoch)
        self.Y.append(loss)
        self.axes.cla()
        self.axes.plot(self.X, self.Y, "-")
        self.axes.set_xlabel("epoch")
        self.axes.set_ylabel("loss")
        self.axes.set_xlim([10, self.num_epochs])
        self.axes.grid()
