"""What the contracts (d2lcore.contracts.engine) need to know of TensorFlow and Keras 3: their tensors, a few of their
layers' sizes, and the checks that a traced graph (tf.function) runs itself, where values are known only when it
runs."""

import contextlib
import inspect
import re
import sys

import keras
import tensorflow as tf

from d2lcore.contracts.engine import attach

TENSOR = "a tf.Tensor"
# Keras' own argument of every layer's call, which contracts do not name
OWN_ARGUMENTS = ("training",)


def is_tensor(x):
    return tf.is_tensor(x)


def kind(x):
    dtype = tf.as_dtype(x.dtype)
    if dtype.is_bool:
        return "b"
    if dtype.is_floating:
        return "f"
    if dtype.is_complex:
        return "c"
    if dtype.is_integer:
        return "u" if dtype.is_unsigned else "i"
    return "O"  # strings, resources


def dtype_name(x):
    return tf.as_dtype(x.dtype).name


def values(x):
    """x's values as NumPy eagerly; None inside a traced graph (tf.function), where they are known only when the
    graph runs (see :func:`assert_lengths`, :func:`assert_positions`)."""
    if not tf.executing_eagerly() or not hasattr(x, "numpy"):
        return None
    return x.numpy()


def symbolic(x):
    """Whether x is one of Keras' symbolic tensors, as Keras traces a call to infer its outputs' shapes."""
    return isinstance(x, keras.KerasTensor)


def marked(message):
    """A graph assertion's message, marked as ours for :func:`graph_errors`."""
    return f"<d2lcore>{message}</d2lcore>"


@contextlib.contextmanager
def graph_errors():
    """Around a call of a TensorFlow graph (tf.function) made by d2lcore: a failed check inside the graph
    (:func:`assert_lengths`, :func:`assert_positions`) comes out as a ValueError with its message instead of
    TensorFlow's InvalidArgumentError."""
    try:
        yield
    except tf.errors.InvalidArgumentError as error:
        ours = re.search(r"<d2lcore>(.*?)</d2lcore>", str(error), re.S)
        if ours is None:
            raise
        raise ValueError(ours.group(1)) from None


_IN_GRAPH = "got other values inside a TensorFlow graph (tf.function)"


def assert_lengths(name, x):
    """Inside a traced graph: assertions that the lengths ``x`` (an integer or a float tensor) are whole numbers
    >= 0, checked when the graph runs (failing with our message, see :func:`graph_errors`)."""
    checks = []
    if x.dtype.is_floating:
        whole = marked(f"{name} must hold whole numbers (lengths); {_IN_GRAPH}")
        checks.append(tf.debugging.assert_equal(x, tf.round(x), message=whole))
    positive = marked(f"{name} must be >= 0; {_IN_GRAPH}")
    return [*checks, tf.debugging.assert_non_negative(x, message=positive)]


def assert_positions(X, offset_or_cache, max_len):
    """Inside a traced graph, where the number of steps of X (batch, steps, ...) is unknown: an assertion that
    its positions fit in a positional table of ``max_len`` positions, checked when the graph runs (failing with
    our message, see :func:`graph_errors`). ``offset_or_cache``: the first position (an int or a scalar tensor),
    or a decoder's cache (batch, past, num_hiddens) of the past positions, whose length is known only then."""
    if tf.is_tensor(offset_or_cache) and offset_or_cache.shape.rank == 3:  # a cache
        past = tf.shape(offset_or_cache)[1]
        expected = f"at most max_len = {max_len} positions with the cached ones"
    else:
        past = offset_or_cache
        expected = f"at most max_len - offset = {max_len} - offset steps"
    message = f"X must have {expected}; got more inside a TensorFlow graph: raise max_len"
    return [
        tf.debugging.assert_less_equal(
            past + tf.shape(X)[1], max_len, message=marked(message)
        )
    ]


def checked_first(checks):
    """The operations created inside run after the graph assertions ``checks`` (none: no constraint), so that a
    failed check, not the error of an operation it guards, is what the graph reports."""
    return tf.control_dependencies(checks) if checks else contextlib.nullcontext()


def rows(embedding):
    """The number of token indices that a keras.layers.Embedding embeds."""
    return embedding.input_dim


def width(layer):
    """The width of the outputs of a keras.layers.Dense; of a LayerNormalization, the width it was built for, or
    None before its first call."""
    if isinstance(layer, keras.layers.Dense):
        return layer.units
    gamma = getattr(layer, "gamma", None)
    return None if gamma is None else int(gamma.shape[-1])


def gru_size(gru):
    """(num_layers, num_hiddens) of d2lcore's GRU (d2lcore.tensorflow.rnn)."""
    return len(gru.grus), gru.num_hiddens


def call_signature(cls):
    """The signature of what calling a layer of the class ``cls`` runs: its ``call``; with Keras' ``training``
    where ``call`` does not take it (Keras takes it for every layer and passes it on to the layers inside)."""
    signature = inspect.signature(cls.call)
    parameters = list(signature.parameters.values())
    if any(p.name == "training" or p.kind == p.VAR_KEYWORD for p in parameters):
        return signature
    training = inspect.Parameter("training", inspect.Parameter.KEYWORD_ONLY, default=None)
    return signature.replace(parameters=[*parameters, training])


def checked(obj):
    """``@d2l.checked``: attach ``obj``'s contract with TensorFlow's hooks (engine.attach)."""
    return attach(obj, sys.modules[__name__])
