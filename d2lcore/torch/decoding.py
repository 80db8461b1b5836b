"""Decoding with a trained encoder–decoder in PyTorch: greedy translation (Sequence-to-Sequence Toolkit). Beam search
and a key–value cache belong here too."""

import torch

from d2lcore.convert import last_query
from d2lcore.text import encode_source

from .tensors import checked


@checked
def predict_seq2seq(
    net,
    src_sentence,
    src_vocab,
    tgt_vocab,
    num_steps,
    device,
    save_attention_weights=False,
):
    """Greedy translation of one sentence by ``net`` (an EncoderDecoder on ``device``),
    cut or padded to ``num_steps`` tokens: (translation, attention), with ``attention`` the
    decoder's weights of every step as NumPy if ``save_attention_weights``, else []; each
    (num_steps,) for Seq2SeqAttentionDecoder (see last_query for the Transformer's)."""
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    eos = tgt_vocab["<eos>"]
    net.eval()
    output, attention = [], []
    with torch.no_grad():
        enc_X = torch.tensor([src], dtype=torch.long, device=device)  # a batch of one
        enc_valid_len = torch.tensor([src_valid_len], device=device)
        enc_outputs = net.encoder(enc_X, enc_valid_len)
        state = net.decoder.init_state(enc_outputs, enc_valid_len)
        dec_X = torch.tensor([[tgt_vocab["<bos>"]]], dtype=torch.long, device=device)
        for _ in range(num_steps):
            Y, state = net.decoder(dec_X, state)
            dec_X = Y.argmax(dim=2)  # (1, 1): the most likely token is the next input
            token = int(dec_X[0, 0])
            if save_attention_weights:  # this step's weights (see last_query)
                attention.append(last_query(net.decoder.attention_weights))
            if token == eos:
                break
            output.append(token)
    return " ".join(tgt_vocab.to_tokens(output)), attention


__all__ = ["predict_seq2seq"]  # the names d2lcore.torch re-exports
