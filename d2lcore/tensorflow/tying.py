"""Weight tying in TensorFlow (Label Smoothing and Weight Tying): the Transformer's decoder
whose output layer reuses the target embedding matrix (Press & Wolf, 2017; Inan et al.,
2017; Vaswani et al., 2017, section 3.4)."""

import tensorflow as tf

from .layers import Layer
from .tensors import checked
from .transformer import TransformerDecoder
from .weights import register_converter


class TiedOutput(Layer):
    """The output layer of weight tying: X (..., num_hiddens) -> X Eᵀ + b (..., vocab_size),
    with E (vocab_size, num_hiddens) the variable of ``embedding`` (a Keras Embedding, the
    same variable, not a copy) and b (vocab_size,) a bias of its own."""

    def __init__(self, embedding):
        super().__init__()
        self.embedding = embedding

    def build(self, input_shape):
        vocab_size = self.embedding.input_dim
        self.bias = self.add_weight(shape=(vocab_size,), initializer="zeros", name="bias")

    def call(self, X):
        return tf.matmul(X, self.embedding.embeddings, transpose_b=True) + self.bias


def tied_output_export(layer):
    """A TiedOutput's weights under a dense layer's names (PyTorch's): weight (vocab_size,
    num_hiddens), the embedding's matrix, and bias (vocab_size,)."""
    return {"weight": layer.embedding.embeddings.numpy(), "bias": layer.bias.numpy()}


def tied_output_load(layer, arrays):
    layer.embedding.embeddings.assign(arrays["weight"])
    layer.bias.assign(arrays["bias"])


register_converter(TiedOutput, tied_output_export, tied_output_load)


@checked
class TiedTransformerDecoder(TransformerDecoder):
    """TransformerDecoder whose output layer's weight is the target embedding's: the logits of
    features h (num_hiddens,) are E h + b, with E (vocab_size, num_hiddens) the one matrix
    that also embeds the tokens, and b (vocab_size,) the output layer's own bias. The model
    has vocab_size * num_hiddens parameters fewer. Arguments, state and shapes as
    TransformerDecoder's."""

    def __init__(self, *args, **kwargs):  # TransformerDecoder's arguments
        super().__init__(*args, **kwargs)
        self.dense = TiedOutput(self.embedding)  # in place of the Dense layer


__all__ = ["TiedTransformerDecoder"]  # the names d2lcore.tensorflow re-exports
