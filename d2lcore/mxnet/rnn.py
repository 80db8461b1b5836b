"""A multi-layer GRU in MXNet with batch-major inputs and a (num_layers, batch,
num_hiddens) state, as in every framework of d2lcore (Sequence-to-Sequence
Toolkit)."""

import os

from mxnet import np
from mxnet.gluon import rnn

from .weights import register_converter

# MXNet's oneDNN (MKL-DNN) implementation of recurrent layers on the CPU ignores their
# dropout: it would silently train without dropout between the GRU layers. MXNet reads
# this variable at every call; 0 selects its own CPU implementation, which applies dropout
# and computes the same function (set the variable to 1 yourself to keep oneDNN's).
os.environ.setdefault("MXNET_USE_MKLDNN_RNN", "0")


class GRU(rnn.GRU):
    """``num_layers`` GRU layers (Cho et al., 2014), dropout between them in training.
    X (batch, steps, inputs), state (num_layers, batch, num_hiddens) or None for zeros ->
    (outputs (batch, steps, num_hiddens), new state (num_layers, batch, num_hiddens))."""

    def __init__(self, num_hiddens, num_layers, dropout=0):
        super().__init__(num_hiddens, num_layers, dropout=dropout, layout="NTC")

    def __call__(self, X, state=None):
        # Gluon's GRU takes and returns its state as a list of one (num_layers, batch, h)
        # array, and returns no state when given none: adapt that in __call__, which
        # Gluon's GRU itself uses for the same purpose, so that forward stays Gluon's own.
        if state is None:
            state = self.begin_state(batch_size=X.shape[0], ctx=X.ctx)[0]
        outputs, (state,) = super().__call__(X, [state])
        return outputs, state


# Gluon names a GRU's parameters l{k}_i2h_weight (3h, inputs), l{k}_h2h_weight (3h, h),
# l{k}_i2h_bias, l{k}_h2h_bias, with the gates in PyTorch's order (reset, update, new) and
# the same equations: only the names differ from the canonical ones of torch.nn.GRU.
_GLUON_NAMES = {
    "weight_ih": "i2h_weight",
    "weight_hh": "h2h_weight",
    "bias_ih": "i2h_bias",
    "bias_hh": "h2h_bias",
}


def _gru_export(layer):
    return {
        f"{canonical}_l{k}": layer._reg_params[f"l{k}_{gluon}"].list_data()[0].asnumpy()
        for k in range(layer._num_layers)
        for canonical, gluon in _GLUON_NAMES.items()
    }


def _gru_load(layer, arrays):
    for k in range(layer._num_layers):
        for canonical, gluon in _GLUON_NAMES.items():
            param = layer._reg_params[f"l{k}_{gluon}"]
            param.set_data(np.array(arrays[f"{canonical}_l{k}"], dtype=param.dtype))


register_converter(rnn.GRU, _gru_export, _gru_load)
