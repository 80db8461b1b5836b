"""A multi-layer GRU in TensorFlow (Keras 3) with batch-major inputs and a (num_layers,
batch, num_hiddens) state, as in every framework of d2lcore (Sequence-to-Sequence
Toolkit)."""

import keras
import numpy
import tensorflow as tf

from .checks import checked
from .weights import register_converter


@checked
class GRU(keras.layers.Layer):
    """``num_layers`` GRU layers (Cho et al., 2014) with dropout between layers (in
    training).

    X (batch, steps, inputs), state (num_layers, batch, num_hiddens) or None for zeros ->
    (outputs (batch, steps, num_hiddens): the last layer's state at every step, new state
    (num_layers, batch, num_hiddens)). A call on one step (steps = 1) advances the state
    by one step. Keras's GRU with ``reset_after=True`` (its default) computes the same
    function as PyTorch's and MXNet's. Input sizes are inferred on the first call."""

    def __init__(self, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.grus = [
            keras.layers.GRU(num_hiddens, return_sequences=True, return_state=True)
            for _ in range(num_layers)
        ]
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, X, state=None, training=None):
        if state is None:
            state = tf.zeros((len(self.grus), tf.shape(X)[0], self.num_hiddens), X.dtype)
        new_state = []
        for i, layer in enumerate(self.grus):
            if i > 0:
                X = self.dropout(X, training=training)
            if X.shape[1] == 1:  # one step: the layer's cell alone, without a loop
                h, _ = layer.cell(X[:, 0], state[i], training=training)
                X = h[:, None, :]
            else:
                X, h = layer(X, initial_state=state[i], training=training)
            new_state.append(h)
        return X, tf.stack(new_state)


# Keras keeps a GRU layer's input weights as one kernel (inputs, 3h) with the gates in the
# order (update z, reset r, new n), the recurrent ones as recurrent_kernel (h, 3h), and
# both biases in bias (2, 3h). The canonical (PyTorch) layout is weight_ih (3h, inputs)
# with the gates in the order (r, z, n), weight_hh (3h, h), bias_ih (3h,), bias_hh (3h,).
def _to_rzn(kernel_zrn):
    """Columns (z, r, n) of a Keras kernel -> rows (r, z, n) of a canonical weight."""
    z, r, n = numpy.split(kernel_zrn, 3, axis=-1)
    return numpy.concatenate((r, z, n), axis=-1).T


def _to_zrn(weight_rzn):
    """Rows (r, z, n) of a canonical weight -> columns (z, r, n) of a Keras kernel."""
    r, z, n = numpy.split(weight_rzn, 3, axis=0)
    return numpy.concatenate((z, r, n), axis=0).T


def _gru_export(gru):
    arrays = {}
    for k, layer in enumerate(gru.grus):
        cell = layer.cell
        arrays[f"weight_ih_l{k}"] = _to_rzn(cell.kernel.numpy())
        arrays[f"weight_hh_l{k}"] = _to_rzn(cell.recurrent_kernel.numpy())
        bias = cell.bias.numpy()  # (2, 3h): input bias, recurrent bias
        arrays[f"bias_ih_l{k}"] = _to_rzn(bias[0])
        arrays[f"bias_hh_l{k}"] = _to_rzn(bias[1])
    return arrays


def _gru_load(gru, arrays):
    for k, layer in enumerate(gru.grus):
        cell = layer.cell
        cell.kernel.assign(_to_zrn(arrays[f"weight_ih_l{k}"]))
        cell.recurrent_kernel.assign(_to_zrn(arrays[f"weight_hh_l{k}"]))
        bias_ih, bias_hh = arrays[f"bias_ih_l{k}"], arrays[f"bias_hh_l{k}"]
        cell.bias.assign(numpy.stack((_to_zrn(bias_ih), _to_zrn(bias_hh))))


register_converter(GRU, _gru_export, _gru_load)
