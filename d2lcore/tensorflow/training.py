"""Training and greedy translation of encoder–decoder models in TensorFlow
(Sequence-to-Sequence Toolkit)."""

import weakref

import keras
import tensorflow as tf

from d2lcore.convert import last_query
from d2lcore.initialization import xavier_uniform_weights
from d2lcore.plotting import Animator
from d2lcore.records import show_training
from d2lcore.text import encode_source
from d2lcore.timer import Timer

from .checks import checked, graph_errors
from .layers import all_layers
from .seq2seq import MaskedSoftmaxCELoss
from .weights import export_weights, load_weights


def _initialize(net):
    """d2lcore.initialization's rule; a call on a dummy batch first creates lazy weights."""
    dummy = tf.zeros((1, 1), dtype=tf.int32)
    net(dummy, dummy, tf.ones(1, dtype=tf.int32))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


def _device_name(device):
    """The name for tf.device of a tf.config.LogicalDevice or a str such as "/GPU:0"."""
    return device if isinstance(device, str) else device.name


def _make_train_step(net, optimizer, loss_fn, bos, batch):
    """The compiled step for batches like ``batch``, of any batch size (no new tracing)."""
    signature = [tf.TensorSpec((None, *a.shape[1:]), a.dtype) for a in batch]
    # Adam's variables now: a tf.function that creates variables is traced twice
    optimizer.build(net.trainable_variables)

    @tf.function(input_signature=signature)
    def train_step(X, X_valid_len, Y, Y_valid_len):
        # Teacher forcing: the decoder reads <bos>, then the target shifted by one
        bos_column = tf.fill((tf.shape(Y)[0], 1), tf.constant(bos, Y.dtype))
        dec_input = tf.concat((bos_column, Y[:, :-1]), axis=1)
        with tf.GradientTape() as tape:
            Y_hat, _ = net(X, dec_input, X_valid_len, training=True)
            loss = tf.reduce_sum(loss_fn(Y_hat, Y, Y_valid_len))  # over the valid tokens
            tokens = tf.cast(tf.reduce_sum(Y_valid_len), loss.dtype)
            per_token = loss / tokens
        # The gradient of the loss per token: its global norm clipped to 1, then Adam
        grads = tape.gradient(per_token, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss, tokens

    # The graph traced for that signature, which the loop calls directly
    return train_step.get_concrete_function()


@checked
def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Train ``net`` (an EncoderDecoder), first reinitialised by d2lcore.initialization's
    rule, with Adam on the loss per token, teacher-forced, the gradient's global norm clipped
    to 1. Batches: (X (batch, steps), X_valid_len (batch,), Y (batch, steps), Y_valid_len
    (batch,)). Shows the record "training"; returns the loss per token of every epoch."""
    with tf.device(_device_name(device)):
        _initialize(net)
        optimizer = keras.optimizers.Adam(learning_rate=lr, global_clipnorm=1)
        loss_fn = MaskedSoftmaxCELoss()
        animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
        train_step = None
        losses, total_tokens = [], 0
        timer = Timer()
        for epoch in range(num_epochs):
            # The epoch's summed loss and number of target tokens, kept as tensors
            loss_sum, num_tokens = tf.zeros(()), tf.zeros(())
            for batch in data_iter:
                if train_step is None:
                    bos = tgt_vocab["<bos>"]
                    train_step = _make_train_step(net, optimizer, loss_fn, bos, batch)
                loss, tokens = train_step(*batch)
                loss_sum, num_tokens = loss_sum + loss, num_tokens + tokens
            losses.append(float(loss_sum / num_tokens))  # the epoch's loss per token
            total_tokens += int(num_tokens)
            # points after epoch 1, then every 10 epochs (about 10 in all in a short run)
            animator.add_epoch(epoch + 1, num_epochs, losses[-1])
        seconds = timer.stop()
    short_name = _device_name(device).rsplit("device:", 1)[-1]  # e.g. CPU:0
    show_training(losses, total_tokens, seconds, short_name)
    return losses


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
