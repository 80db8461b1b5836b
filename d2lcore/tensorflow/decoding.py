"""Decoding with a trained encoder–decoder in TensorFlow (Sequence-to-Sequence Toolkit):
greedy translation, its layers' calls compiled as graphs."""

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


__all__ = ["predict_seq2seq"]  # the names d2lcore.tensorflow re-exports
