"""Decoding with encoder–decoder models in MXNet (Sequence-to-Sequence Toolkit): greedy
translation of one sentence, and batched beam search with length normalisation (Decoding:
Greedy and Beam Search)."""

from mxnet import np, npx

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
    output, attention = [], []
    enc_X = np.array([src], dtype="int32", ctx=device)  # a batch of one
    enc_valid_len = np.array([src_valid_len], dtype="int32", ctx=device)
    enc_outputs = net.encoder(enc_X, enc_valid_len)
    state = net.decoder.init_state(enc_outputs, enc_valid_len)
    dec_X = np.array([[tgt_vocab["<bos>"]]], dtype="int32", ctx=device)
    for _ in range(num_steps):
        Y, state = net.decoder(dec_X, state)
        dec_X = Y.argmax(axis=2)  # (1, 1): the most likely token is the next input
        token = int(dec_X[0, 0])
        if save_attention_weights:  # this step's weights (see last_query)
            attention.append(last_query(net.decoder.attention_weights))
        if token == eos:
            break
        output.append(token)
    return " ".join(tgt_vocab.to_tokens(output)), attention


def _reorder(state, rows):
    """``state`` (an array, None, or a tuple of them, nested) with every array's axis 0
    taken at ``rows``."""
    if state is None:
        return None
    if isinstance(state, tuple | list):
        return tuple(_reorder(part, rows) for part in state)
    return np.take(state, rows, axis=0)


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
    enc_X = np.array([src for src, _ in sources], dtype="int32", ctx=device)
    enc_valid_lens = np.array([n for _, n in sources], dtype="int32", ctx=device)
    enc_outputs = net.encoder(enc_X, enc_valid_lens)  # (batch, num_steps, h)
    # Every sentence k times over: (batch * k, ...), the caches still empty
    state = net.decoder.init_state(
        np.repeat(enc_outputs, k, axis=0), np.repeat(enc_valid_lens, k, axis=0)
    )
    # The k copies start alike: only the first is alive, the others score -inf
    scores = np.full((batch, k), -np.inf, ctx=device)
    scores[:, 0] = 0.0
    tokens = np.zeros((batch * k, 0), dtype="int32", ctx=device)
    lengths = np.zeros(batch * k, dtype="int32", ctx=device)  # n: tokens after <bos>
    done = np.zeros(batch * k, dtype="int32", ctx=device)  # 1: <eos> emitted
    dec_X = np.full((batch * k, 1), bos, dtype="int32", ctx=device)
    offsets = np.arange(batch, dtype="int32", ctx=device)[:, None] * k  # beam 0's row
    for _ in range(num_steps):
        Y, state = net.decoder(dec_X, state)  # one new position per row, cached
        log_probs = npx.log_softmax(Y[:, -1], axis=-1)  # (batch * k, vocab)
        vocab = log_probs.shape[-1]
        # A finished hypothesis goes on with <eos> at no cost: its score stays
        stay = np.full((1, vocab), -np.inf, ctx=device)
        stay[0, eos] = 0.0
        log_probs = np.where(done[:, None] == 1, stay, log_probs)
        candidates = scores[:, :, None] + log_probs.reshape(batch, k, vocab)
        scores, index = npx.topk(
            candidates.reshape(batch, k * vocab),
            k=k,
            axis=1,
            ret_typ="both",
            dtype="int32",
        )
        token = index % vocab  # (batch, k), and the parent beam of each:
        parent = ((index - token) / vocab).astype("int32")  # an exact division
        rows = (offsets + parent).reshape(-1)  # (batch * k,) the parents' rows
        # Each hypothesis takes its parent's cache, tokens, length and end
        state, tokens, lengths, was_done = _reorder((state, tokens, lengths, done), rows)
        token = token.reshape(-1)
        tokens = np.concatenate((tokens, token[:, None]), axis=1)
        lengths = lengths + (1 - was_done)  # a new token, <eos> included
        done = np.maximum(was_done, (token == eos).astype("int32"))
        dec_X = token[:, None]
        if int(done.min()) == 1:
            break
    normalised = (scores / ((5 + lengths.reshape(batch, k)) / 6) ** alpha).asnumpy()
    tokens = tokens.asnumpy()
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
    # The position of each row's first separator, + 1: (batch,)
    prefix_lens = (prompt == separator).astype("int32").argmax(axis=1).astype("int32") + 1
    tokens, logits = [], []
    Y, caches = net(prompt, prefix_lens)  # outside autograd.record: dropout is off
    sequence = prompt
    for step in range(num_steps):
        logits.append(Y[:, -1])  # (batch, vocab): the next token's scores
        tokens.append(Y[:, -1].argmax(axis=-1).astype(prompt.dtype))
        if step == num_steps - 1:
            break
        new = np.expand_dims(tokens[-1], 1)  # (batch, 1)
        if use_cache:  # one new position, at the caches' length
            Y, caches = net(new, prefix_lens, caches)
        else:  # every position again
            sequence = np.concatenate((sequence, new), axis=1)
            Y, _ = net(sequence, prefix_lens)
    return np.stack(tokens, axis=1), np.stack(logits, axis=1)


__all__ = [
    "beam_search",
    "generate",
    "predict_seq2seq",
]  # the names d2lcore.mxnet re-exports
