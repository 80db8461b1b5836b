"""The encoder–decoder architecture in PyTorch (Sequence-to-Sequence
Toolkit): base classes and their
composition."""

from torch import nn

from d2lcore.common import not_implemented


class Encoder(nn.Module):
    """Base class of encoders: ``forward(X, *args)`` maps a source batch to encoder
    outputs."""

    def __init__(self):
        super().__init__()

    def forward(self, X, *args):
        raise not_implemented(self, "forward")


class Decoder(nn.Module):
    """Base class of decoders: ``init_state`` turns the encoder's outputs into a decoder
    state; ``forward(X, state)`` returns (outputs, new state)."""

    def __init__(self):
        super().__init__()

    def init_state(self, enc_outputs, *args):
        raise not_implemented(self, "init_state")

    def forward(self, X, state):
        raise not_implemented(self, "forward")


class AttentionDecoder(Decoder):
    """A decoder with attention: ``attention_weights`` are the weights of its last
    call."""

    @property
    def attention_weights(self):
        raise not_implemented(self, "attention_weights")


class EncoderDecoder(nn.Module):
    """An encoder and a decoder trained together: the encoder reads enc_X, its outputs
    give the decoder's first state, and the decoder reads dec_X."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X, *args):
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
]  # the names d2lcore.torch re-exports
