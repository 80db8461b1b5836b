"""Sinusoidal positional encoding in TensorFlow (section 7). Vaswani et al., 2017,
"Attention is all you need"."""

import tensorflow as tf

from d2lcore.checks import check_dropout, check_int, check_positions
from d2lcore.positional import sinusoid_table

from .checks import check_float, marked
from .layers import Dropout, Layer


class PositionalEncoding(Layer):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout. ``P`` is the whole table,
    (1, max_len, num_hiddens), computed once (a constant, not a weight)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.dropout = Dropout(check_dropout(dropout))
        self.P = tf.constant(sinusoid_table(max_len, num_hiddens))

    def call(self, X, offset=0, training=None):
        # X: (batch, steps, num_hiddens)
        steps = check_positions(X, self.num_hiddens, offset, self.max_len)
        check_float(X=X)
        if steps is None:  # unknown until run time (tf.function): check it in the graph
            steps = tf.shape(X)[1]
            tf.debugging.assert_less_equal(
                offset + steps,
                self.max_len,
                message=marked(
                    f"X must have at most max_len - offset = {self.max_len} - offset steps; "
                    "got more inside a TensorFlow graph: raise max_len"
                ),
            )
        P = tf.cast(self.P[:, offset : offset + steps, :], X.dtype)
        return self.dropout(X + P, training=training)
