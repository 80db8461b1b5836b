"""What d2lcore's Keras layers share (TensorFlow, Keras 3), and every use of Keras' private
attributes in d2lcore (so that a new Keras version needs changes here only): the base classes
``Layer`` and ``Model`` of the taught layers and of the encoder–decoder, which the pages name."""

import keras


class Layer(keras.layers.Layer):
    """The base of d2lcore's Keras layers: a Keras layer whose sublayers create their weights
    on their first call (as PyTorch's lazy modules and Gluon's deferred initialisation do),
    whose call may take Python values (an offset, a decoder state) besides tensors, and
    which drops a sublayer that an attribute held before it was replaced, unbuilt (as
    PyTorch and Gluon do)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Python numbers, lists or tuples as positional arguments, which Keras 3 refuses by default
        self._allow_non_tensor_positional_args = True

    def __setattr__(self, name, value):
        old = self.__dict__.get(name)
        super().__setattr__(name, value)
        if isinstance(old, keras.layers.Layer) and old is not value and not old.built:
            # A sublayer replaced before its first call (a subclass's W_k in place of its
            # parent's) is dropped, not kept among the layer's sublayers
            self._tracker.untrack(old)

    def build(self, input_shape):
        # Nothing to create: the sublayers build themselves on their first call. Without this
        # method, Keras would trace call() on symbolic inputs to build the layer first.
        pass


class Model(keras.Model):
    """A ``keras.Model`` set up as :class:`Layer`: the base of d2lcore's EncoderDecoder."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._allow_non_tensor_positional_args = True

    def build(self, input_shape):
        pass  # as Layer's


def trainable_variables_of(layer):
    """The trainable variables that ``layer`` created itself (not its sublayers')."""
    return list(layer._trainable_variables)


def tracked_sublayers(layer):
    """The sublayers that Keras tracks for ``layer``, whatever attribute holds them."""
    return list(layer._layers)


def all_layers(layer):
    """``layer`` and all its sublayers, recursively, ``layer`` first."""
    return list(layer._flatten_layers())


def untrack(layer, sublayers):
    """Stop tracking ``sublayers`` (layers that ``layer`` holds) as parts of ``layer``: a
    subclass that replaces its parent's sublayers, before they are built, drops the old ones
    (Keras would otherwise keep them among the layer's sublayers and weights)."""
    for sub in sublayers:
        layer._tracker.untrack(sub)
