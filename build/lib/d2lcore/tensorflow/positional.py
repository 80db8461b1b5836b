"""Sinusoidal positional encoding in TensorFlow (section 6). Vaswani et al., 2017,
"Attention is all you need"."""

import keras
import tensorflow as tf

from d2lcore.checks import check_int, check_shapes
from d2lcore.positional import sinusoid_table


class PositionalEncoding(keras.layers.Layer):
    """Adds the sinusoidal encodings of positions offset, ..., offset + steps - 1 to X
    (batch, steps, num_hiddens), then applies dropout. ``P`` is the whole table,
    (1, max_len, num_hiddens), computed once (a constant, not a weight)."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self._allow_non_tensor_positional_args = True  # offset is a Python int
        self.num_hiddens = check_int("num_hiddens", num_hiddens, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.dropout = keras.layers.Dropout(dropout)
        self.P = tf.constant(sinusoid_table(max_len, num_hiddens))

    def call(self, X, offset=0, training=None):
        # X: (batch, steps, num_hiddens)
        steps = check_shapes(X=(X, "batch steps num_hiddens")).get("steps")
        if X.shape[-1] not in (None, self.num_hiddens):
            raise ValueError(
                f"X's last dimension must be num_hiddens = {self.num_hiddens}; "
                f"got X of shape {tuple(X.shape)}"
            )
        check_int("offset", offset, minimum=0)
        if steps is None:  # unknown until run time (tf.function): check it in the graph
            steps = tf.shape(X)[1]
            tf.debugging.assert_less_equal(
                offset + steps, self.max_len, message="too many positions: raise max_len"
            )
        elif offset + steps > self.max_len:
            raise ValueError(
                f"positions {offset} ... {offset + steps - 1} do not fit in the table of "
                f"max_len = {self.max_len} positions: raise max_len"
            )
        P = tf.cast(self.P[:, offset : offset + steps, :], X.dtype)
        return self.dropout(X + P, training=training)
