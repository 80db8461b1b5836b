"""Pre-norm Transformer blocks in PyTorch (Where the Layer Norm Goes): the layer norm moves
from after each residual connection to the input of each sublayer, x + Sublayer(LayerNorm(x)),
and the encoder and decoder end with a final layer norm. Xiong et al., 2020, "On layer
normalization in the Transformer architecture"."""

import math

import torch
from torch import nn

from d2lcore.transformer import LAYER_NORM_EPS

from .multihead import MultiHeadAttention
from .tensors import checked
from .transformer import PositionWiseFFN, TransformerDecoder, TransformerEncoder


@checked
class PreNormEncoderBlock(nn.Module):
    """Multi-head self-attention, then the position-wise FFN, each as
    X + dropout(Sublayer(LayerNorm(X))): the layer norms (ln1, ln2) normalise the sublayers'
    inputs, and the residual path from the block's input to its output is never normalised.

    X (batch, steps, num_hiddens), valid_lens None, (batch,) or (batch, steps) ->
    (batch, steps, num_hiddens)."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(num_hiddens, eps=LAYER_NORM_EPS)
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.ln2 = nn.LayerNorm(num_hiddens, eps=LAYER_NORM_EPS)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.dropout = nn.Dropout(dropout)

    def forward(self, X, valid_lens=None):
        Y = self.ln1(X)
        X = X + self.dropout(self.attention(Y, Y, Y, valid_lens))
        return X + self.dropout(self.ffn(self.ln2(X)))


@checked
class PreNormDecoderBlock(nn.Module):
    """Causal self-attention, encoder–decoder attention, then the position-wise FFN, each as
    X + dropout(Sublayer(LayerNorm(X))) (layer norms ln1, ln2, ln3).

    Arguments, cache and result as in TransformerDecoderBlock: the cache holds the block's
    inputs at the earlier positions, which ln1 normalises as keys and values (a layer norm
    works position by position). Returns (output (batch, steps, num_hiddens), key_values
    (batch, past + steps, num_hiddens))."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(num_hiddens, eps=LAYER_NORM_EPS)
        self.self_attention = MultiHeadAttention(
            num_hiddens, num_heads, dropout, use_bias
        )
        self.ln2 = nn.LayerNorm(num_hiddens, eps=LAYER_NORM_EPS)
        self.cross_attention = MultiHeadAttention(
            num_hiddens, num_heads, dropout, use_bias
        )
        self.ln3 = nn.LayerNorm(num_hiddens, eps=LAYER_NORM_EPS)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.dropout = nn.Dropout(dropout)

    def forward(self, X, enc_outputs, enc_valid_lens=None, cache=None):
        batch, steps = X.shape[0], X.shape[1]
        key_values = X if cache is None else torch.cat((cache, X), dim=1)
        past = key_values.shape[1] - steps
        # Causal mask: query i (position past + i) sees the first past + i + 1 keys
        lens = torch.arange(past + 1, past + steps + 1, device=X.device)
        dec_valid_lens = lens.expand(batch, steps)  # (batch, steps)
        Y, KV = self.ln1(X), self.ln1(key_values)
        X = X + self.dropout(self.self_attention(Y, KV, KV, dec_valid_lens))
        Y = self.ln2(X)
        X = X + self.dropout(
            self.cross_attention(Y, enc_outputs, enc_outputs, enc_valid_lens)
        )
        return X + self.dropout(self.ffn(self.ln3(X))), key_values


@checked
class PreNormTransformerEncoder(TransformerEncoder):
    """TransformerEncoder with pre-norm blocks and a final layer norm ``ln``, without which
    the output would be the unnormalised sum of the embeddings and of every block's
    sublayers. X (batch, steps), valid_lens None or (batch,) -> (batch, steps, num_hiddens)."""

    block_class = PreNormEncoderBlock  # what TransformerEncoder stacks num_layers of

    def __init__(self, *args, **kwargs):  # TransformerEncoder's arguments
        super().__init__(*args, **kwargs)
        self.ln = nn.LayerNorm(self.num_hiddens, eps=LAYER_NORM_EPS)

    def forward(self, X, valid_lens=None):
        return self.ln(super().forward(X, valid_lens))  # the blocks, then the final norm


@checked
class PreNormTransformerDecoder(TransformerDecoder):
    """TransformerDecoder with pre-norm blocks and a final layer norm ``ln`` before the dense
    layer, which would otherwise read the unnormalised sum of every block's sublayers. State,
    call and attention weights as in TransformerDecoder."""

    block_class = PreNormDecoderBlock  # what TransformerDecoder stacks num_layers of

    def __init__(self, *args, **kwargs):  # TransformerDecoder's arguments
        super().__init__(*args, **kwargs)
        self.ln = nn.LayerNorm(self.num_hiddens, eps=LAYER_NORM_EPS)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens, caches = state
        past = 0 if caches[0] is None else caches[0].shape[1]  # positions decoded before
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens), past)
        new_caches = []
        for blk, cache in zip(self.blks, caches):
            X, key_values = blk(X, enc_outputs, enc_valid_lens, cache)
            new_caches.append(key_values)
        # The final norm, then the dense layer
        return self.dense(self.ln(X)), (enc_outputs, enc_valid_lens, tuple(new_caches))


__all__ = [
    "PreNormDecoderBlock",
    "PreNormEncoderBlock",
    "PreNormTransformerDecoder",
    "PreNormTransformerEncoder",
]  # the names d2lcore.torch re-exports
