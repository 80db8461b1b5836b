"""The encoder–decoder architecture in TensorFlow (Sequence-to-Sequence
Toolkit): base classes and their
composition, as Keras 3 layers."""

from d2lcore.common import not_implemented

from .layers import Layer, Model


class Encoder(Layer):
    """Base class of encoders: ``call(X, *args)`` maps a source batch to encoder
    outputs."""

    def __init__(self):
        super().__init__()

    def call(self, X, *args):
        raise not_implemented(self, "call")


class Decoder(Layer):
    """Base class of decoders: ``init_state`` turns the encoder's outputs into a decoder
    state; ``call(X, state)`` returns (outputs, new state)."""

    def __init__(self):
        super().__init__()

    def init_state(self, enc_outputs, *args):
        raise not_implemented(self, "init_state")

    def call(self, X, state):
        raise not_implemented(self, "call")


class AttentionDecoder(Decoder):
    """A decoder with attention: ``attention_weights`` are the weights of its last
    call."""

    @property
    def attention_weights(self):
        raise not_implemented(self, "attention_weights")


class EncoderDecoder(Model):
    """An encoder and a decoder trained together: the encoder reads enc_X, its outputs
    give the decoder's first state, and the decoder reads dec_X."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def call(self, enc_X, dec_X, *args):
        """enc_X (batch, src_steps), dec_X (batch, steps); ``args`` (e.g. the source valid
        lengths) go to the encoder and to ``init_state``. Returns (outputs, final state).
        """
        enc_outputs = self.encoder(enc_X, *args)
        state = self.decoder.init_state(enc_outputs, *args)
        return self.decoder(dec_X, state)


__all__ = [
    "AttentionDecoder",
    "Decoder",
    "Encoder",
    "EncoderDecoder",
]  # the names d2lcore.tensorflow re-exports
