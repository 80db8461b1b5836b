"""The engine that checks a taught class's or function's arguments against its contract.

``@d2l.checked`` above a taught class or function attaches its contract, the :class:`Contract` of
:mod:`d2lcore.contracts` named like it. The engine binds each call to the real signature and checks each argument
against its spec, then the contract's rules, once per outermost call (the checked layers that a checked call calls
are not checked again); every error starts with the taught name: ``AdditiveAttention: valid_lens must hold whole
numbers; got [1.5, 2.0]``; a subclass's constructor that only passes ``*args, **kwargs`` on is bound to its parent's
signature (:func:`method_signature`). Checks only check: a model computes the same without them
(``with unchecked():``). A class redefined on a page keeps the decorator: a parameter its contract does not name
passes unchecked, with a warning. The framework facts come from the hooks of ``d2lcore/<framework>/tensors.py``
(see :class:`AnyFramework`).
"""

import contextlib
import functools
import inspect
import threading
import warnings

import numpy

_state = threading.local()


def outermost():
    """Whether no checked call is running in this thread (checks run only then)."""
    return getattr(_state, "depth", 0) == 0


@contextlib.contextmanager
def unchecked():
    """Inside ``with unchecked():`` no contract is checked: the code of a checked call, or a test's."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


# --- what an argument must be ---------------------------------------------------------------------------------


def _shape(x):
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(None if d is None else int(d) for d in shape)


class Call:
    """One call being checked: the taught name, the bound arguments, the object (a layer, or None for a
    function), the framework's hooks and the sizes of the named dimensions seen so far."""

    def __init__(self, name, arguments, obj, fw, dims):
        self.name, self.arguments, self.obj, self.fw = name, arguments, obj, fw
        self.dims = dict(dims)
        self.preset = set(self.dims)  # the sizes that the layer gave
        self.passed_on = {}  # what a spec passes on instead of the argument (Batches)
        self.graph_checks = []  # the checks a traced graph runs, before the call's own operations

    def tensor(self, name, x):
        if not self.fw.is_tensor(x):
            raise TypeError(f"{name} must be {self.fw.TENSOR}; got {type(x).__name__} {x!r:.40}")

    def shape(self, name, x, spec):
        """Check that the tensor ``x`` (the argument ``name``) has the shape ``spec`` ("batch n_q d", numbers or
        names, "..." for any number of dimensions; a name has one size in the whole call)."""
        dims, shape = spec.split(), _shape(x)
        if "..." in dims:
            i = dims.index("...")
            if len(shape) < len(dims) - 1:
                raise ValueError(f"{name} must have shape ({', '.join(dims)}); got shape {shape}")
            shape = shape[:i] + shape[len(shape) - (len(dims) - 1 - i) :]
            dims = dims[:i] + dims[i + 1 :]
        if len(shape) != len(dims):
            raise ValueError(
                f"{name} must have {len(dims)} dimension(s), shape ({', '.join(dims)}); got shape {shape}"
            )
        for d, n in zip(dims, shape, strict=True):
            if n is None:  # unknown, in a traced graph
                continue
            expected = int(d) if d.isdigit() else self.dims.setdefault(d, n)
            if n != expected:
                known = ", ".join(d if d.isdigit() else str(self.dims.get(d, d)) for d in dims)
                source = "the layer" if d in self.preset else "the other arguments"
                why = "" if d.isdigit() else f" ({d} = {expected} from {source})"
                raise ValueError(
                    f"{name} must have shape ({', '.join(dims)}) = ({known}); got shape {shape}{why}"
                )


class Spec:
    """What one argument must be: ``check(call, name, value)`` raises the error that says so."""

    def check(self, call, name, value):
        raise NotImplementedError


class Rule(Spec):
    """An argument checked by ``rule(call, name, value)``, a function of :mod:`d2lcore.contracts`."""

    def __init__(self, rule):
        self.rule = rule

    def check(self, call, name, value):
        self.rule(call, name, value)


ANY = Rule(lambda call, name, value: None)
"""A parameter that the contract leaves to the model (a device, a padding token, a layer passed in)."""


class Maybe(Spec):
    """None, or what ``spec`` says."""

    def __init__(self, spec):
        self.spec = spec

    def check(self, call, name, value):
        if value is not None:
            self.spec.check(call, name, value)


class Int(Spec):
    """An int (not a bool), at least ``minimum`` (if given)."""

    def __init__(self, minimum=None):
        self.minimum = minimum

    def check(self, call, name, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r:.40}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{name} must be >= {self.minimum}; got {value}")


class Real(Spec):
    """A real number (an int or a float, not a bool), finite unless ``finite=False``, >= ``minimum`` and
    < ``below`` (each if given)."""

    def __init__(self, minimum=None, below=None, finite=True):
        self.minimum, self.below, self.finite = minimum, below, finite

    def check(self, call, name, value):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(
                f"{name} must be a number (an int or a float); got {type(value).__name__} {value!r:.60}"
            )
        value = float(value)
        if value != value or (self.finite and abs(value) == float("inf")):
            raise ValueError(f"{name} must be a finite number; got {value}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{name} must be >= {self.minimum}; got {value}")
        if self.below is not None and value >= self.below:
            raise ValueError(f"{name} must be < {self.below}; got {value}")


DROPOUT = Real(minimum=0, below=1)
"""A dropout probability: 0 <= dropout < 1."""


class Is(Spec):
    """A value that ``accepts(value)`` accepts; ``what`` says what it must be."""

    def __init__(self, what, accepts):
        self.what, self.accepts = what, accepts

    def check(self, call, name, value):
        if not self.accepts(value):
            raise TypeError(f"{name} must be {self.what}; got {type(value).__name__} {value!r:.60}")


def Bool():
    """True or False (a string such as "False" would count as True)."""
    return Is("True or False", lambda value: isinstance(value, bool))


def Text(what="a str"):
    """A str; ``what`` says what it holds."""
    return Is(what, lambda value: isinstance(value, str))


def Function(what):
    """A callable; ``what`` says which (what it takes and gives, with an example)."""
    return Is(what, callable)


class VocabWith(Spec):
    """A :class:`d2lcore.text.Vocab` holding the reserved ``tokens`` (without them a lookup gives <unk>)."""

    def __init__(self, *tokens):
        self.tokens = tokens

    def check(self, call, name, value):
        if not hasattr(value, "to_tokens") or not hasattr(value, "__contains__"):
            raise TypeError(
                f"{name} must be a d2lcore Vocab; got {type(value).__name__} {value!r:.60}"
            )
        missing = [t for t in self.tokens if t not in value]
        if missing:
            raise ValueError(
                f"{name} must hold the reserved tokens {list(self.tokens)}; got one without {missing}: "
                "build it with reserved_tokens=['<pad>', '<bos>', '<eos>']"
            )


class Fields(Spec):
    """A tuple (or list) of ``len(fields)`` entries, each checked by its spec and named ``name's field``:
    ``Fields(outputs=Floats("batch steps h"), state=ANY)``; ``how`` says where one comes from."""

    def __init__(self, how="", **fields):
        self.how, self.fields = how, fields

    def check(self, call, name, value):
        if not isinstance(value, tuple | list) or len(value) != len(self.fields):
            if isinstance(value, tuple | list):
                size = f" of {len(value)} entr{'y' if len(value) == 1 else 'ies'}"
            else:
                size = f" {value!r:.40}"
            raise TypeError(
                f"{name} must be a tuple ({', '.join(self.fields)}){self.how}; got {type(value).__name__}{size}"
            )
        for (field, spec), item in zip(self.fields.items(), value, strict=True):
            spec.check(call, f"{name}'s {field}", item)


class ListOf(Spec):
    """A list or tuple of ``what`` (at least one if ``nonempty``), entry i checked by ``spec`` as ``name[i]``."""

    def __init__(self, spec, what, nonempty=False):
        self.spec, self.what, self.nonempty = spec, what, nonempty

    def check(self, call, name, value):
        if not isinstance(value, list | tuple):
            raise TypeError(
                f"{name} must be a list of {self.what}; got {type(value).__name__} {value!r:.60}"
            )
        if self.nonempty and not value:
            raise ValueError(f"{name} must be a non-empty list of {self.what}; got an empty list")
        for i, item in enumerate(value):
            self.spec.check(call, f"{name}[{i}]", item)


class Tensor(Spec):
    """A tensor of the framework, of shape ``shape`` (see :meth:`Call.shape`), of any dtype."""

    def __init__(self, shape):
        self.spec = shape

    def check(self, call, name, value):
        call.tensor(name, value)
        call.shape(name, value, self.spec)


class Floats(Tensor):
    def check(self, call, name, value):
        super().check(call, name, value)
        if call.fw.kind(value) != "f":
            raise TypeError(
                f"{name} must be a floating-point tensor; got dtype {call.fw.dtype_name(value)}: convert "
                "it first (e.g. X.float() in PyTorch, X.astype('float32') in MXNet, tf.cast(X, tf.float32) "
                "in TensorFlow)"
            )


class Ids(Tensor):
    """A tensor of token indices (integers) of shape ``shape``, each in 0 ... ``vocab`` - 1, where ``vocab`` names
    a dimension whose size the layer gives (the contract's ``dims``)."""

    def __init__(self, shape, vocab="vocab"):
        super().__init__(shape)
        self.vocab = vocab

    def check(self, call, name, value):
        super().check(call, name, value)
        if call.fw.kind(value) not in "iu":
            raise TypeError(
                f"{name} must be an integer tensor; got dtype {call.fw.dtype_name(value)}: token indices "
                "are whole numbers (e.g. int32 or int64)"
            )
        ids = call.fw.values(value)
        if ids is not None:  # None: known only when a traced graph runs
            check_token_ids(name, ids, call.dims.get(self.vocab))


def check_token_ids(name, ids, vocab_size):
    """Check that the NumPy array ``ids`` holds token indices 0 ... vocab_size - 1 (if vocab_size is known)."""
    bad = [] if vocab_size is None else ids[(ids < 0) | (ids >= vocab_size)]
    if len(bad):
        raise ValueError(
            f"{name} must hold token indices 0 ... {vocab_size - 1} (vocab_size = {vocab_size}); got {bad.size} "
            f"out of range, e.g. {sorted(set(bad.tolist()))[:5]}: was the model built for another vocabulary?"
        )


class Lengths(Tensor):
    """A tensor of lengths, whole numbers >= 0 (integers, or floats that are whole numbers; not a boolean mask), of
    one of the ``shapes`` (by rank: ``Lengths("batch", "batch n_q")``)."""

    def __init__(self, *shapes):
        self.shapes = shapes

    def check(self, call, name, value):
        call.tensor(name, value)
        shape = _shape(value)
        by_rank = {len(s.split()): s for s in self.shapes}
        if shape is None or len(shape) not in by_rank:
            expected = " or ".join(f"({', '.join(s.split())})" for s in self.shapes)
            raise ValueError(f"{name} must have shape {expected}; got shape {shape}")
        call.shape(name, value, by_rank[len(shape)])
        kind = call.fw.kind(value)
        if kind not in "iuf":
            mask = ": a boolean mask is not a length" if kind == "b" else ""
            raise TypeError(
                f"{name} must hold lengths (integers); got dtype {call.fw.dtype_name(value)}{mask}"
            )
        lengths = call.fw.values(value)
        if lengths is None:  # a traced graph: the framework checks them when the graph runs
            call.graph_checks += call.fw.assert_lengths(name, value)
        elif not numpy.isfinite(lengths).all() or (lengths != lengths.round()).any():
            raise ValueError(f"{name} must hold whole numbers; got {lengths.tolist()}")
        elif (lengths < 0).any():
            raise ValueError(f"{name} must be >= 0; got {lengths.tolist()}")


def check_int(name, value, minimum=None):
    """For the library's own functions (a seed, a batch size): ``value`` is an int >= ``minimum``; returns it."""
    Int(minimum).check(None, name, value)
    return value


# --- contracts --------------------------------------------------------------------------------------------------


class Contract:
    """The contract of one taught class or function.

    - ``init``, ``call``: {parameter: :class:`Spec`} of the constructor and of the call (a function's arguments);
      a parameter that may stay at its default is checked only when given;
    - ``methods``: {method name: {parameter: Spec}} for other methods (a decoder's ``init_state``);
    - ``dims(obj, fw)``: the sizes that the layer fixes before a call, by dimension name (``{"vocab": 10}``), for
      the shapes and token indices of ``call`` and ``methods`` (``fw``: the framework's hooks);
    - ``built``: the inputs whose last dimension the layer's weights take from its first call; a later call with
      another is refused (the weights were built for the first);
    - ``rules``: functions ``rule(call)`` for what involves several arguments or the layer, run after the specs
      of the call; ``init_rules``: the same for the constructor.
    """

    def __init__(
        self, init=None, call=None, methods=None, dims=None, built=(), rules=(), init_rules=()
    ):
        self.init, self.call, self.methods = init or {}, call or {}, methods or {}
        self.dims, self.built, self.rules, self.init_rules = dims, built, rules, init_rules

    def parts(self):
        """{method name: specs}: ``__init__``, ``call`` (the call or the function) and the other methods."""
        return {"__init__": self.init, "call": self.call, **self.methods}


def check(name, specs, arguments, obj=None, fw=None, dims=None, rules=()):
    """Check the bound ``arguments`` {parameter: value} against ``specs``, then ``rules``; the error names ``name``."""
    call = Call(name, arguments, obj, fw, dims or {})
    try:
        for parameter, value in arguments.items():
            if parameter in specs:
                passed_on = specs[parameter].check(call, parameter, value)
                if passed_on is not None:  # Batches': the same batches, checked as read
                    call.passed_on[parameter] = passed_on
        for rule in rules:
            rule(call)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None
    return call


def _check_built(name, layer, inputs):
    widths = layer.__dict__.setdefault("_d2l_input_widths", {})
    for arg, X in inputs.items():
        shape = _shape(X)
        size = shape[-1] if shape else None
        built = widths.get(arg)
        if None not in (built, size) and built != size:
            raise ValueError(
                f"{name}: {arg}'s last dimension must be {built}, the size this {name} was built for on its "
                f"first call; got {arg} of shape {shape}: make a new layer for inputs of another size"
            )
        if built is None:
            widths[arg] = size


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def unnamed(signature, specs, fw, method):
    """The parameters of ``signature`` that ``specs`` do not name (but ``*args``, ``**kwargs`` and the framework's
    own, such as Keras' ``training``)."""
    named = {*specs, *getattr(fw, "OWN_ARGUMENTS", ())}
    parameters = list(signature.parameters.values())[1 if method else 0 :]
    return [p.name for p in parameters if p.name not in named and p.kind not in _VARIADIC]


def _guard(function, contract, part, name, signature, fw, cls=None):
    """``function`` with its arguments bound to ``signature`` and checked against the ``part`` of ``contract`` at
    each outermost call; for a method of the class ``cls``, only on instances of ``cls`` itself (an undecorated
    subclass may take other arguments). Warns of the parameters that the contract does not name."""
    specs = contract.parts()[part]
    label = name if part in ("__init__", "call") else f"{name}.{part}"
    rules = {"__init__": contract.init_rules, "call": contract.rules}.get(part, ())
    layer_dims = contract.dims if cls is not None and part != "__init__" else None
    built = contract.built if part == "call" else ()
    symbolic = getattr(fw, "symbolic", lambda x: False)
    checked_first = getattr(fw, "checked_first", lambda checks: contextlib.nullcontext())
    extra = unnamed(signature, specs, fw, cls is not None)
    if extra:
        warnings.warn(
            f"{label} takes {', '.join(extra)}, which its contract (d2lcore.contracts.{name}) does not name: "
            "those arguments are passed on unchecked",
            stacklevel=4,
        )

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        graph_checks = ()
        if outermost() and (cls is None or vars(type(args[0])).get("__d2l_contract__") == name):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{name}: {error}") from None
            arguments = dict(bound.arguments)
            obj = None if cls is None else arguments.pop(next(iter(signature.parameters)))
            if not any(symbolic(v) for v in arguments.values()):  # not a graph being built
                dims = layer_dims(obj, fw) if layer_dims else {}
                call = check(label, specs, arguments, obj, fw, dims, rules)
                if built:
                    _check_built(name, obj, {k: arguments[k] for k in built if k in arguments})
                if call.passed_on:
                    bound.arguments.update(call.passed_on)
                    args, kwargs = bound.args, bound.kwargs
                graph_checks = call.graph_checks
        with unchecked(), checked_first(graph_checks):
            return function(*args, **kwargs)

    try:  # Keras 3 reads a layer's config from inspect.getfullargspec, which reads __signature__ only
        guarded.__signature__ = signature if part == "__init__" else inspect.signature(function)
    except ValueError:
        pass
    return guarded


def _passes_on(signature):
    """Whether a method takes only ``*args`` and ``**kwargs`` (after ``self``): it passes them on to its parent's."""
    kinds = {p.kind for p in list(signature.parameters.values())[1:]}
    return bool(kinds) and kinds <= set(_VARIADIC)


def method_signature(cls, method):
    """The signature of ``cls``'s ``method``: for one that only passes ``*args, **kwargs`` on to ``super()`` (a
    subclass that keeps its parent's constructor arguments), its parent's, the arguments it really takes."""
    for klass in cls.__mro__:
        if method in vars(klass):
            signature = inspect.signature(getattr(klass, method))
            if not _passes_on(signature):
                return signature
    return inspect.signature(getattr(cls, method))


def attach(obj, fw):
    """Attach the contract of ``obj``, a taught class or function (d2lcore.contracts.<its name>), for the
    framework whose hooks are ``fw``. Returns the class, or the checked function."""
    from d2lcore import contracts

    name = obj.__name__
    contract = getattr(contracts, name, None)
    if not isinstance(contract, Contract):
        raise LookupError(
            f"d2lcore has no contract of {name!r} (d2lcore.contracts.{name}): remove @d2l.checked"
        )
    if not isinstance(obj, type):
        return _guard(obj, contract, "call", name, inspect.signature(obj), fw)
    obj.__d2l_contract__ = name
    for part, specs in contract.parts().items():
        # the call is checked before the framework's __call__ runs forward (Keras: build and call)
        target = "__call__" if part == "call" else part
        if specs:
            method = getattr(obj, target)
            signature = fw.call_signature(obj) if part == "call" else method_signature(obj, target)
            setattr(obj, target, _guard(method, contract, part, name, signature, fw, obj))
    return obj


class AnyFramework:
    """The hooks of the framework-neutral code (text, BLEU, plotting), whose tensors are NumPy arrays or any
    framework's (read with :func:`d2lcore.convert.to_numpy`).

    A framework's hooks, ``d2lcore/<framework>/tensors.py``, give the same: ``TENSOR`` (what a tensor is, for the
    messages), ``is_tensor(x)``, ``kind(x)`` (the NumPy kind of x's dtype: "f" floats, "i" integers, "u"
    unsigned, "b" booleans, "c" complex), ``dtype_name(x)``, ``values(x)`` (NumPy); and as needed by the framework
    or its contracts: ``call_signature(cls)`` (of what calling a layer runs), ``rows``, ``width``, ``gru_size``
    (the sizes of its layers), ``OWN_ARGUMENTS`` (its own parameters of every layer's call, which contracts do not
    name), ``symbolic(x)`` (x is a symbol of a graph being built: not checked), ``assert_lengths`` and
    ``assert_positions`` (the checks that a traced graph runs, where ``values`` gives None: a list of them) and
    ``checked_first(checks)`` (a context in which the call's operations run after those checks).
    """

    TENSOR = "a tensor or array"

    @staticmethod
    def is_tensor(x):
        return hasattr(x, "shape") and hasattr(x, "dtype")

    @staticmethod
    def kind(x):
        return numpy.dtype(getattr(x.dtype, "as_numpy_dtype", x.dtype)).kind

    @staticmethod
    def dtype_name(x):
        return str(x.dtype)

    @staticmethod
    def values(x):
        from d2lcore.convert import to_numpy

        return to_numpy(x)


def checked(obj):
    """``@checked`` of the framework-neutral taught code: attach the contract of ``obj`` (see :func:`attach`)."""
    return attach(obj, AnyFramework)
