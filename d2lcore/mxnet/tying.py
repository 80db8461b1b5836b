"""Weight tying in MXNet (Label Smoothing and Weight Tying): the Transformer's decoder whose
output layer reuses the target embedding matrix (Press & Wolf, 2017; Inan et al., 2017;
Vaswani et al., 2017, section 3.4)."""

from mxnet.gluon import nn

from .tensors import checked
from .transformer import TransformerDecoder


@checked
class TiedTransformerDecoder(TransformerDecoder):
    """TransformerDecoder whose output layer's weight is the target embedding's: the logits of
    features h (num_hiddens,) are E h + b, with E (vocab_size, num_hiddens) the one matrix
    that also embeds the tokens, and b (vocab_size,) the output layer's own bias. The model
    has vocab_size * num_hiddens parameters fewer. Arguments, state and shapes as
    TransformerDecoder's."""

    def __init__(self, *args, **kwargs):  # TransformerDecoder's arguments
        super().__init__(*args, **kwargs)
        vocab_size, num_hiddens = self.embedding.weight.shape  # the embedding matrix E
        # Gluon's Dense keeps its weight as (units, in_units) = (vocab_size, num_hiddens),
        # the shape of the embedding's. Given the embedding's parameters, it takes the
        # embedding's Parameter "weight" as its own, and makes only its bias
        self.dense = nn.Dense(
            vocab_size,
            flatten=False,
            in_units=num_hiddens,
            params=self.embedding.collect_params(),
        )


__all__ = ["TiedTransformerDecoder"]  # the names d2lcore.mxnet re-exports
