"""Decoding with a trained encoder–decoder in PyTorch: greedy translation
(Sequence-to-Sequence Toolkit) and batched beam search with length normalisation
(Decoding: Greedy and Beam Search)."""

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


def _reorder(state, rows):
    """``state`` (a tensor, None, or a tuple of them, nested) with every tensor's axis 0
    taken at ``rows``."""
    if state is None:
        return None
    if isinstance(state, tuple | list):
        return tuple(_reorder(part, rows) for part in state)
    return state.index_select(0, rows)


@checked
def beam_search(
    net,
    src_sentences,
    src_vocab,
    tgt_vocab,
    num_steps,
    device,
    beam_size,
    alpha=0.6,
    all_beams=False,
):
    """Translate the sentences of ``src_sentences`` (a list of str) at once, keeping
    ``beam_size`` hypotheses per sentence, with ``net`` (an EncoderDecoder on ``device``
    whose decoder's state is batch-first, such as TransformerDecoder's) and at most
    ``num_steps`` target tokens.

    Rows of the decoder's batch: beam j of sentence b is row b * beam_size + j. A
    hypothesis y scores log P(y | x) / lp(y), lp(y) = ((5 + n) / 6) ** alpha (Wu et al.,
    2016), n its tokens after <bos>, its <eos> included; the search ranks by
    log P(y | x), the final choice by the normalised score. Returns, per sentence,
    (translation, score) of the best hypothesis, or, if ``all_beams``, the list of every
    live hypothesis's, best first."""
    sources = [encode_source(s, src_vocab, num_steps) for s in src_sentences]
    batch, k = len(sources), beam_size
    bos, eos = tgt_vocab["<bos>"], tgt_vocab["<eos>"]
    net.eval()
    with torch.no_grad():
        enc_X = torch.tensor(
            [src for src, _ in sources], device=device
        )  # (batch, num_steps)
        enc_valid_lens = torch.tensor([n for _, n in sources], device=device)
        enc_outputs = net.encoder(enc_X, enc_valid_lens)
        # Every sentence k times over: (batch * k, ...), the caches still empty
        state = net.decoder.init_state(
            enc_outputs.repeat_interleave(k, 0), enc_valid_lens.repeat_interleave(k, 0)
        )
        # The k copies start alike: only the first is alive, the others score -inf
        scores = torch.full((batch, k), -torch.inf, device=device)
        scores[:, 0] = 0.0
        tokens = torch.zeros((batch * k, 0), dtype=torch.long, device=device)
        lengths = torch.zeros(
            batch * k, dtype=torch.long, device=device
        )  # n: tokens after <bos>
        done = torch.zeros(batch * k, dtype=torch.bool, device=device)  # <eos> emitted
        dec_X = torch.full((batch * k, 1), bos, dtype=torch.long, device=device)
        offsets = torch.arange(batch, device=device)[:, None] * k  # row of beam 0
        for _ in range(num_steps):
            Y, state = net.decoder(dec_X, state)  # one new position per row, cached
            log_probs = torch.log_softmax(Y[:, -1], dim=-1)  # (batch * k, vocab)
            vocab = log_probs.shape[-1]
            # A finished hypothesis goes on with <eos> at no cost: its score stays
            stay = torch.full((vocab,), -torch.inf, device=device)
            stay[eos] = 0.0
            log_probs = torch.where(done[:, None], stay, log_probs)
            candidates = scores[:, :, None] + log_probs.reshape(batch, k, vocab)
            scores, index = candidates.reshape(batch, k * vocab).topk(k, dim=1)
            parent, token = index // vocab, index % vocab  # (batch, k) each
            rows = (offsets + parent).reshape(-1)  # (batch * k,) the parents' rows
            # Each hypothesis takes its parent's cache, tokens, length and end
            state, tokens, lengths, was_done = _reorder(
                (state, tokens, lengths, done), rows
            )
            token = token.reshape(-1)
            tokens = torch.cat((tokens, token[:, None]), dim=1)
            lengths = lengths + (~was_done).long()  # a new token, <eos> included
            done = was_done | (token == eos)
            dec_X = token[:, None]
            if bool(done.all()):
                break
        normalised = scores / ((5 + lengths.reshape(batch, k)) / 6) ** alpha
    normalised, tokens = normalised.cpu().numpy(), tokens.cpu().numpy()
    results = []
    for b in range(batch):
        beams = []
        for j in (-normalised[b]).argsort(kind="stable").tolist():
            score = float(normalised[b, j])
            if score == -float("inf"):  # never alive: fewer hypotheses than k
                continue
            ids = tokens[b * k + j].tolist()
            ids = ids[: ids.index(eos)] if eos in ids else ids
            beams.append((" ".join(tgt_vocab.to_tokens(ids)), score))
        results.append(beams if all_beams else beams[0])
    return results


@checked
def generate(net, prompt, num_steps, separator, use_cache=True):
    """Greedy continuation of ``prompt`` (batch, n) token indices by ``net`` (a PrefixLM): each
    row's prefix is its tokens up to its first ``separator``, included (every row holds one).
    With ``use_cache``, the prompt runs once and each new token alone, on the caches of
    projected keys and values; without, the whole sequence runs again at every step.

    -> (tokens (batch, num_steps), logits (batch, num_steps, vocab_size)): the chosen tokens
    and the logits each was chosen from."""
    net.eval()
    with torch.no_grad():
        # The position of each row's first separator, + 1: (batch,)
        prefix_lens = (prompt == separator).int().argmax(dim=1) + 1
        tokens, logits = [], []
        Y, caches = net(prompt, prefix_lens)
        sequence = prompt
        for step in range(num_steps):
            logits.append(Y[:, -1])  # (batch, vocab): the next token's scores
            tokens.append(Y[:, -1].argmax(dim=-1))
            if step == num_steps - 1:
                break
            new = tokens[-1][:, None]  # (batch, 1)
            if use_cache:  # one new position, at the caches' length
                Y, caches = net(new, prefix_lens, caches)
            else:  # every position again
                sequence = torch.cat((sequence, new), dim=1)
                Y, _ = net(sequence, prefix_lens)
    return torch.stack(tokens, dim=1), torch.stack(logits, dim=1)


__all__ = [
    "beam_search",
    "generate",
    "predict_seq2seq",
]  # the names d2lcore.torch re-exports
