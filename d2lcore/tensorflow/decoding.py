"""Decoding with a trained encoder–decoder in TensorFlow (Sequence-to-Sequence Toolkit):
greedy translation, its layers' calls compiled as graphs; batched beam search with length
normalisation (Decoding: Greedy and Beam Search)."""

import weakref

import tensorflow as tf

from d2lcore.convert import last_query
from d2lcore.text import encode_source

from .layers import all_layers
from .tensors import checked, graph_errors
from .training import _device_name


class _GraphCall:
    """``layer(*args, training=False)`` run as a TensorFlow graph (tf.function): one
    Python call instead of one per operation, which is most of an eager step's time.

    A new kind of input traces the layer anew; reduce_retracing makes a dimension that
    changes from call to call (the growing caches of TransformerDecoder) unknown, so
    that one more trace serves every size. What the call stores in its layers'
    ``attention_weights`` comes out of the graph and is stored again after every run, so
    the layers hold the last call's weights, as after an eager call."""

    NAMES = ("attention_weights", "_attention_weights")  # as set by call()

    def __init__(self, layer):
        # Weak references: the cache must not keep the layer alive
        self.layers = [weakref.ref(sub) for sub in all_layers(layer)]  # layer 1st
        self.layer = self.layers[0]
        self.function = tf.function(self._run, reduce_retracing=True)

    def _stored(self):
        """{"i:name": value} of the attributes in NAMES that layer i has set."""
        return {
            f"{i}:{name}": vars(sub())[name]
            for i, sub in enumerate(self.layers)
            for name in self.NAMES
            if vars(sub()).get(name) is not None
        }

    def _run(self, *args):  # traced
        before = self._stored()
        outputs = self.layer()(*args, training=False)
        # Only what this call set: other values may belong to another graph
        new = {
            k: value for k, value in self._stored().items() if value is not before.get(k)
        }
        return outputs, new

    def __call__(self, *args):
        with graph_errors():  # a failed check inside the graph: a ValueError
            outputs, new = self.function(*args)
        for key, value in new.items():
            i, name = key.split(":")
            setattr(self.layers[int(i)](), name, value)
        return outputs


_GRAPH_CALLS = weakref.WeakKeyDictionary()  # layer -> its _GraphCall


def evaluate(layer, *args):
    """``layer(*args, training=False)``, run as a graph once the layer has been built (its
    first call creates its weights, eagerly). The graph is kept for the next calls."""
    if not layer.built:
        return layer(*args, training=False)
    if layer not in _GRAPH_CALLS:
        _GRAPH_CALLS[layer] = _GraphCall(layer)
    return _GRAPH_CALLS[layer](*args)


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
    with tf.device(_device_name(device)):
        enc_X = tf.constant([src], dtype=tf.int32)  # a batch of one
        enc_valid_len = tf.constant([src_valid_len], dtype=tf.int32)
        enc_outputs = evaluate(net.encoder, enc_X, enc_valid_len)
        state = net.decoder.init_state(enc_outputs, enc_valid_len)
        dec_X = tf.constant([[tgt_vocab["<bos>"]]], dtype=tf.int32)
        for _ in range(num_steps):
            Y, state = evaluate(net.decoder, dec_X, state)  # as a graph
            dec_X = tf.argmax(Y, axis=2, output_type=tf.int32)  # (1, 1): the next input
            token = int(dec_X.numpy()[0, 0])
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
    return tf.gather(state, rows, axis=0)


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
    with tf.device(device if isinstance(device, str) else device.name):
        enc_X = tf.constant([src for src, _ in sources], dtype=tf.int32)
        enc_valid_lens = tf.constant([n for _, n in sources], dtype=tf.int32)
        enc_outputs = evaluate(
            net.encoder, enc_X, enc_valid_lens
        )  # (batch, num_steps, h)
        # Every sentence k times over: (batch * k, ...), the caches still empty
        state = net.decoder.init_state(
            tf.repeat(enc_outputs, k, axis=0), tf.repeat(enc_valid_lens, k, axis=0)
        )
        # The k copies start alike: only the first is alive, the others score -inf
        scores = tf.constant([[0.0] + [-float("inf")] * (k - 1)] * batch)  # (batch, k)
        tokens = tf.zeros((batch * k, 0), dtype=tf.int32)
        lengths = tf.zeros(batch * k, dtype=tf.int32)  # n: tokens after <bos>
        done = tf.zeros(batch * k, dtype=tf.bool)  # <eos> emitted
        dec_X = tf.fill((batch * k, 1), bos)
        offsets = tf.range(batch)[:, None] * k  # (batch, 1): beam 0's row
        for _ in range(num_steps):
            Y, state = evaluate(net.decoder, dec_X, state)  # one new position per row
            log_probs = tf.nn.log_softmax(Y[:, -1], axis=-1)  # (batch * k, vocab)
            vocab = log_probs.shape[-1]
            # A finished hypothesis goes on with <eos> at no cost: its score stays
            stay = tf.where(tf.range(vocab) == eos, 0.0, -float("inf"))  # (vocab,)
            log_probs = tf.where(done[:, None], stay, log_probs)
            candidates = scores[:, :, None] + tf.reshape(log_probs, (batch, k, vocab))
            scores, index = tf.math.top_k(tf.reshape(candidates, (batch, k * vocab)), k)
            parent, token = index // vocab, index % vocab  # (batch, k) each
            rows = tf.reshape(offsets + parent, (-1,))  # (batch * k,) the parents' rows
            # Each hypothesis takes its parent's cache, tokens, length and end
            state, tokens, lengths, was_done = _reorder(
                (state, tokens, lengths, done), rows
            )
            token = tf.reshape(token, (-1,))
            tokens = tf.concat((tokens, token[:, None]), axis=1)
            lengths = lengths + tf.cast(
                ~was_done, tf.int32
            )  # a new token, <eos> included
            done = was_done | (token == eos)
            dec_X = token[:, None]
            if bool(tf.reduce_all(done)):
                break
        lp = ((5.0 + tf.cast(tf.reshape(lengths, (batch, k)), tf.float32)) / 6.0) ** alpha
        normalised = (scores / lp).numpy()
    tokens = tokens.numpy()
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
    is_separator = tf.cast(prompt == separator, tf.int32)
    prefix_lens = tf.argmax(is_separator, axis=1, output_type=tf.int32) + 1
    tokens, logits = [], []
    Y, caches = net(prompt, prefix_lens, training=False)
    sequence = prompt
    for step in range(num_steps):
        logits.append(Y[:, -1])  # (batch, vocab): the next token's scores
        tokens.append(tf.argmax(Y[:, -1], axis=-1, output_type=prompt.dtype))
        if step == num_steps - 1:
            break
        new = tokens[-1][:, None]  # (batch, 1)
        if use_cache:  # one new position, at the caches' length
            Y, caches = net(new, prefix_lens, caches, training=False)
        else:  # every position again
            sequence = tf.concat((sequence, new), axis=1)
            Y, _ = net(sequence, prefix_lens, training=False)
    return tf.stack(tokens, axis=1), tf.stack(logits, axis=1)


__all__ = [
    "beam_search",
    "generate",
    "predict_seq2seq",
]  # the names d2lcore.tensorflow re-exports
