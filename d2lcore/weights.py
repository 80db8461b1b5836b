"""A layer's weights as NumPy arrays under canonical names, for every framework (framework-neutral).

Canonical names are the attribute path from the layer, joined by ``.``, then the parameter's name, in PyTorch's
conventions and layouts: a dense layer has ``weight`` (out, in) and ``bias`` (out,), an embedding ``weight``
(vocab, dim), a layer norm ``weight`` (gamma) and ``bias`` (beta); layers held in a list or a sequential container
are named by their index (``"blks.0.attention.W_q.weight"``). State that is not learned (a positional-encoding
table, running statistics) is not a weight. A layer held twice appears under both paths, as in PyTorch's
``state_dict()``. The names and layouts are the same in every framework, so weights exported by one framework load
into another.

This module holds the walk over a layer, the converter registry and the errors, once. Each framework's
``weights`` module makes one :class:`WeightsIO` with the three things that really differ between frameworks:

- ``parts(layer)``: ``((export_fn, load_fn), [(name, sublayer), ...])``, the layer's own weights and its
  sublayers in the order of PyTorch's ``state_dict`` (own weights first);
- ``unbuilt(layer, whole)``: ``None`` if the layer's weights exist (with ``whole``, its sublayers' too), else the
  reason, completing "the layer (Type) ...";
- ``base``: the framework's layer class, which registered types must subclass.

Extending to more layer types
-----------------------------
Teach ``export_weights`` and ``load_weights`` a layer type whose weights are stored differently from PyTorch
(e.g. a multi-layer GRU) with the framework module's ``register_converter(layer_type, export_fn, load_fn)``.
``export_fn(layer)`` returns ``{local name: NumPy array}`` in PyTorch's layout (the names relative to the layer,
e.g. ``"weight_ih_l0"``); ``load_fn(layer, arrays)`` receives the same names with arrays of the same shapes
(``load_weights`` has checked them) and stores them in the layer. A registered layer is a leaf: its sublayers are
not visited. The most specific registered class in the layer's MRO wins.
"""

import numpy as np

from d2lcore.convert import to_numpy

NOT_BUILT = "has no weights yet: its input sizes are inferred on the first call. Call the layer once on an input first."
"""Why a layer whose input sizes are not inferred yet has no weights to export or load."""


def check_weights_fit(expected, given):
    """For load_weights: ``given`` {name: array} must have exactly the names of ``expected``
    {name: array}, with the same shapes; else ValueError listing every problem."""
    missing = [name for name in expected if name not in given]
    unexpected = [name for name in given if name not in expected]
    mismatched = [
        f"{name}: expected {expected[name].shape}, got {tuple(given[name].shape)}"
        for name in expected
        if name in given and tuple(given[name].shape) != expected[name].shape
    ]
    problems = []
    if missing:
        problems.append(f"missing {missing}")
    if unexpected:
        problems.append(f"unexpected {unexpected}")
    if mismatched:
        problems.append(f"wrong shapes [{'; '.join(mismatched)}]")
    if problems:
        raise ValueError(
            "load_weights: the weights must have exactly the layer's names and shapes; "
            "got " + ", ".join(problems)
        )


class WeightsIO:
    """Export and load of one framework's layers (see the module docstring for ``base``, ``parts`` and
    ``unbuilt``). ``converters`` maps a layer type to its ``(export_fn, load_fn)``."""

    def __init__(self, base, parts, unbuilt):
        self.base, self.parts, self.unbuilt = base, parts, unbuilt
        self.converters = {}

    def register_converter(self, layer_type, export_fn, load_fn):
        """Name the weights of ``layer_type`` layers with ``export_fn(layer) -> {name: array}`` and load them
        with ``load_fn(layer, {name: array})``."""
        if not (isinstance(layer_type, type) and issubclass(layer_type, self.base)):
            base = f"{self.base.__module__}.{self.base.__qualname__}"
            raise TypeError(
                f"layer_type must be a subclass of {base}; got {layer_type!r}"
            )
        self.converters[layer_type] = (export_fn, load_fn)

    def converter(self, layer):
        """The (export_fn, load_fn) registered for the most specific class of ``layer``, or None."""
        for cls in type(layer).__mro__:
            if cls in self.converters:
                return self.converters[cls]
        return None

    def _units(self, net, path="", parents=()):
        """(prefix, layer, (export_fn, load_fn)) for every layer: a layer's own weights first, then its
        sublayers, as in PyTorch's state_dict. A layer held twice is visited twice."""
        if any(layer is net for layer in parents):
            raise ValueError(
                f"the sublayer {path!r} contains itself: cannot name its weights"
            )
        converter = self.converter(net)
        problem = self.unbuilt(net, converter is not None)
        if problem:
            where = f"the sublayer {path!r}" if path else "the layer"
            raise ValueError(
                f"net must have been called once before its weights can be read or set; got "
                f"{where} ({type(net).__name__}), which {problem}"
            )
        prefix = f"{path}." if path else ""
        if converter is not None:
            yield prefix, net, converter
            return
        own, sublayers = self.parts(net)
        yield prefix, net, own
        for name, sub in sublayers:
            yield from self._units(sub, prefix + name, (*parents, net))

    def _collect(self, net):
        """({canonical name: float32 array}, [(layer, load_fn, {canonical name: local name}) for each layer])."""
        weights, loaders = {}, []
        for prefix, layer, (export_fn, load_fn) in self._units(net):
            names = {}
            for local, array in export_fn(layer).items():
                weights[prefix + local] = np.asarray(array, dtype=np.float32)
                names[prefix + local] = local
            loaders.append((layer, load_fn, names))
        return weights, loaders

    def export_weights(self, net):
        """``net``'s weights as ``{canonical name: float32 NumPy array}``."""
        return self._collect(net)[0]

    def load_weights(self, net, weights):
        """Copy ``{canonical name: array}`` (NumPy arrays or any framework's tensors) into ``net``, in place.
        Strict: a missing, unexpected or wrongly shaped entry raises ValueError naming them all, before anything
        is changed."""
        if not isinstance(weights, dict):
            raise TypeError(
                "weights must be a dict {canonical name: array}, as export_weights returns; "
                f"got {type(weights).__name__}"
            )
        expected, loaders = self._collect(net)
        given = {str(name): to_numpy(array) for name, array in weights.items()}
        check_weights_fit(expected, given)
        for layer, load_fn, names in loaders:
            if names:
                arrays = {
                    local: np.asarray(given[name], dtype=np.float32)
                    for name, local in names.items()
                }
                load_fn(layer, arrays)
