"""A multi-layer GRU in TensorFlow (Keras 3) with batch-major inputs and a (num_layers,
batch, num_hiddens) state, as in every framework of d2lcore (Sequence-to-Sequence
Toolkit)."""

import keras
import tensorflow as tf

from .layers import Layer
from .tensors import checked
from .weights import gru_export, gru_load, register_converter


@checked
class GRU(Layer):
    """``num_layers`` Keras GRU layers (Cho et al., 2014; with ``reset_after=True``, the
    function of PyTorch's and MXNet's GRU), dropout between them in training. X (batch,
    steps, inputs), state (num_layers, batch, num_hiddens) or None for zeros -> (outputs
    (batch, steps, num_hiddens), new state (num_layers, batch, num_hiddens))."""

    def __init__(self, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.grus = [
            keras.layers.GRU(num_hiddens, return_sequences=True, return_state=True)
            for _ in range(num_layers)
        ]
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, X, state=None):
        if state is None:
            state = tf.zeros((len(self.grus), tf.shape(X)[0], self.num_hiddens), X.dtype)
        new_state = []
        for i, layer in enumerate(self.grus):
            if i > 0:
                X = self.dropout(X)
            if X.shape[1] == 1:  # one step: the layer's cell alone, without a loop
                h, _ = layer.cell(X[:, 0], state[i])
                X = h[:, None, :]
            else:
                X, h = layer(X, initial_state=state[i])
            new_state.append(h)
        return X, tf.stack(new_state)


register_converter(GRU, gru_export, gru_load)
