"""The engine that checks a taught class's or function's arguments against its contract.

A page's taught class or function holds the model alone; the one line ``@d2l.checked`` above it attaches its
contract, an object of :mod:`d2lcore.contracts` named like it (``contracts.AdditiveAttention``). A contract says,
for each parameter, what its value must be (:class:`Int`, :class:`Floats` of shape ``"batch n_q d_q"``,
:class:`Lengths`, ...) and, where arguments must agree with each other or with the layer, a few rules. The
engine binds each call's arguments to the real signature (``inspect.signature(...).bind``), so a contract never
restates one, and checks:

- a class: its constructor's arguments (``init``) before ``__init__``; its call's (``call``) before the framework
  runs ``forward`` (``call`` in Keras); another method's (``methods``, a decoder's ``init_state``) before it;
- a function: its arguments (``call``) before it.

Checks only check: they pass the arguments on untouched, so a model computes the same with them and without them
(``with unchecked():``, which tests/test_contracts.py runs for every taught class). They run once per outermost
call: inside a checked call, the checked layers it calls are not checked again (their inputs come from a checked
call), so a Transformer's blocks do not read the same lengths once per block. An error names what the reader
called, the argument, what was expected and what was given: ``AdditiveAttention: valid_lens must hold whole
numbers; got [1.5, 2.0]``.

A class that a reader redefines on a page keeps the decorator: its arguments are bound to *its* signature, and a
parameter its contract does not name is passed on unchecked, with a warning when the class is defined.

The framework facts (is it a tensor, its dtype, its values) come from small hooks per framework,
``d2lcore/<framework>/tensors.py``.
"""

import contextlib
import functools
import inspect
import threading
import warnings

import numpy

_state = threading.local()


def _depth():
    return getattr(_state, "depth", 0)


@contextlib.contextmanager
def _inside():
    """Marks the code of a checked call: the checked calls inside it are not checked again."""
    _state.depth = _depth() + 1
    try:
        yield
    finally:
        _state.depth -= 1


def outermost():
    """Whether no checked call is running in this thread (checks run only then)."""
    return _depth() == 0


@contextlib.contextmanager
def unchecked():
    """Inside ``with unchecked():`` no contract is checked (for tests: the model computes the same)."""
    _state.depth = _depth() + 1
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
        self.name, self.arguments, self.obj, self.fw, self.dims = (
            name,
            arguments,
            obj,
            fw,
            dict(dims),
        )
        self.preset, self.passed_on = (
            set(self.dims),
            {},
        )  # the sizes the layer gave; Batches' (see check)

    def shape(self, name, x, spec):
        """Check that the tensor ``x`` (the argument ``name``) has the shape ``spec`` ("batch n_q d", numbers or
        names; a name has one size in the whole call); return its shape."""
        dims, shape = spec.split(), _shape(x)
        if "..." in dims:  # any number of dimensions there (but the others)
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
                why = "" if d.isdigit() else f" ({d} = {expected} from {self._source(d)})"
                raise ValueError(
                    f"{name} must have shape ({', '.join(dims)}) = ({known}); got shape {shape}{why}"
                )
        return shape

    def _source(self, dim):
        return "the layer" if dim in self.preset else "the other arguments"

    def tensor(self, name, x):
        if not self.fw.is_tensor(x):
            raise TypeError(f"{name} must be {self.fw.TENSOR}; got {type(x).__name__} {x!r:.40}")


class Spec:
    """What one argument must be: ``check(call, name, value)`` raises the error that says so."""

    def check(self, call, name, value):
        raise NotImplementedError


class _Any(Spec):
    def check(self, call, name, value):
        pass


ANY = _Any()
"""A parameter that the contract leaves to the model (a device, a padding token, a layer passed in)."""


class Int(Spec):
    """A Python int (not a bool), at least ``minimum`` (if given)."""

    def __init__(self, minimum=None):
        self.minimum = minimum

    def check(self, call, name, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r:.40}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{name} must be >= {self.minimum}; got {value}")


class Real(Spec):
    """A real number (an int or a float, not a bool), finite unless ``finite=False``, with ``value >= minimum``,
    ``value < below`` (each if given)."""

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


class Bool(Spec):
    """True or False (a string such as "False" would count as True)."""

    def check(self, call, name, value):
        if not isinstance(value, bool):
            raise TypeError(
                f"{name} must be True or False; got {type(value).__name__} {value!r:.60}"
            )


class Text(Spec):
    """A str; ``what`` says what it holds."""

    def __init__(self, what="a str"):
        self.what = what

    def check(self, call, name, value):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be {self.what}; got {type(value).__name__}")


class Function(Spec):
    """A callable; ``what`` says which (what it takes and gives, with an example)."""

    def __init__(self, what):
        self.what = what

    def check(self, call, name, value):
        if not callable(value):
            raise TypeError(f"{name} must be {self.what}; got {type(value).__name__} {value!r:.60}")


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


class Maybe(Spec):
    """None, or what ``spec`` says."""

    def __init__(self, spec):
        self.spec = spec

    def check(self, call, name, value):
        if value is not None:
            self.spec.check(call, name, value)


class Rule(Spec):
    """An argument checked by ``rule(call, name, value)``, a function of :mod:`d2lcore.contracts`."""

    def __init__(self, rule):
        self.rule = rule

    def check(self, call, name, value):
        self.rule(call, name, value)


class Tensor(Spec):
    """A tensor of the framework, of shape ``shape`` (see :meth:`Call.shape`), of any dtype."""

    def __init__(self, shape):
        self.spec = shape

    def check(self, call, name, value):
        call.tensor(name, value)
        call.shape(name, value, self.spec)


class Floats(Tensor):
    """A floating-point tensor of shape ``shape``."""

    def check(self, call, name, value):
        super().check(call, name, value)
        if call.fw.kind(value) != "f":
            raise dtype_error(name, call.fw.dtype_name(value), "a floating-point")


class Ids(Tensor):
    """A tensor of token indices (integers) of shape ``shape``, each in 0 ... ``vocab`` - 1, where ``vocab`` names
    a dimension whose size the layer gives (the contract's ``dims``)."""

    def __init__(self, shape, vocab="vocab"):
        super().__init__(shape)
        self.vocab = vocab

    def check(self, call, name, value):
        super().check(call, name, value)
        if call.fw.kind(value) not in "iu":
            raise dtype_error(name, call.fw.dtype_name(value), "an integer")
        size, ids = call.dims.get(self.vocab), call.fw.values(value)
        if (
            size is not None
            and ids is not None
            and ids.size
            and (ids.min() < 0 or ids.max() >= size)
        ):
            raise token_ids_error(name, ids, size)


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
            raise TypeError(
                f"{name} must hold lengths (integers); got dtype {call.fw.dtype_name(value)}"
                + (": a boolean mask is not a length" if kind == "b" else "")
            )
        lengths = call.fw.values(value)
        if lengths is None:  # a traced graph: the framework checks them when the graph runs
            call.fw.assert_lengths(name, value)
        else:
            check_lengths(name, lengths)


def check_int(name, value, minimum=None):
    """For the library's own functions (a seed, a batch size): ``value`` is an int >= ``minimum``; returns it."""
    Int(minimum).check(None, name, value)
    return value


def not_implemented(layer, method):
    """The NotImplementedError of a base class's ``method`` (Encoder, Decoder, AttentionDecoder) called on
    ``layer``, which does not define it."""
    return NotImplementedError(
        f"{type(layer).__name__} does not define {method}: Encoder, Decoder and AttentionDecoder are base classes; "
        f"subclass one and define {method} (as Seq2SeqEncoder and Seq2SeqAttentionDecoder do)"
    )


def check_lengths(name, values):
    """Check that the NumPy array ``values`` holds whole numbers >= 0."""
    values = numpy.asarray(values)
    if not numpy.isfinite(values).all() or (values != values.round()).any():
        raise ValueError(f"{name} must hold whole numbers; got {values.tolist()}")
    if (values < 0).any():
        raise ValueError(f"{name} must be >= 0; got {values.tolist()}")


def dtype_error(name, dtype, expected):
    """The TypeError for a tensor ``name`` of ``dtype`` where ``expected`` ("a floating-point") was needed."""
    return TypeError(
        f"{name} must be {expected} tensor; got dtype {dtype}"
        + (
            ": convert it first (e.g. X.float() in PyTorch, X.astype('float32') in MXNet, "
            "tf.cast(X, tf.float32) in TensorFlow)"
            if "float" in expected
            else ": token indices are whole numbers (e.g. int32 or int64)"
        )
    )


def token_ids_error(name, ids, vocab_size):
    """The ValueError for token indices ``ids`` (NumPy) outside 0 ... vocab_size - 1."""
    bad = ids[(ids < 0) | (ids >= vocab_size)]
    return ValueError(
        f"{name} must hold token indices 0 ... {vocab_size - 1} (vocab_size = {vocab_size}); got {bad.size} out "
        f"of range, e.g. {sorted(set(bad.tolist()))[:5]}: was the model built for another vocabulary?"
    )


# --- contracts --------------------------------------------------------------------------------------------------


class Contract:
    """The contract of one taught class or function.

    - ``init``, ``call``: {parameter: :class:`Spec`} of the constructor and of the call (a function's arguments);
      a parameter that may stay at its default is checked only when given;
    - ``methods``: {method name: {parameter: Spec}} for other methods (a decoder's ``init_state``);
    - ``dims(obj, fw)``: the sizes that the layer fixes before a call, by dimension name (``{"vocab": 10}``), for
      the shapes and token indices of ``call`` (``fw``: the framework's hooks);
    - ``built``: the inputs whose last dimension the layer's weights take from its first call; a later call with
      another is refused (the weights were built for the first);
    - ``rules``: functions ``rule(call)`` for what involves several arguments or the layer, run after the specs
      of the call; ``init_rules``: the same for the constructor.
    """

    def __init__(
        self, init=None, call=None, methods=None, dims=None, built=(), rules=(), init_rules=()
    ):
        self.init, self.call, self.methods = init or {}, call or {}, methods or {}
        self.dims, self.built, self.rules, self.init_rules = (dims, built, rules, init_rules)

    def parts(self):
        """{method name: specs}: ``__init__``, ``call`` (the call or the function) and the other methods."""
        return {"__init__": self.init, "call": self.call, **self.methods}


def check(name, specs, arguments, obj=None, fw=None, dims=None, rules=()):
    """Check the bound ``arguments`` {parameter: value} against ``specs``; raise the error naming ``name``."""
    call = Call(name, arguments, obj, fw, dims or {})
    try:
        for parameter, value in arguments.items():
            spec = specs.get(parameter)
            passed_on = None if spec is None else spec.check(call, parameter, value)
            if (
                passed_on is not None
            ):  # only Batches (d2lcore.contracts): the same batches, checked as read
                call.passed_on[parameter] = passed_on
        for rule in rules:
            rule(call)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None
    return call


def _guard(function, name, specs, fw, contract, signature, cls=None, label=None):
    """``function`` with its arguments, bound to ``signature``, checked against ``specs`` at each outermost call;
    for a method of the class ``cls``, only on instances of ``cls`` itself (an undecorated subclass may take
    other arguments) and with the rules and the built widths of ``contract`` for its call."""
    is_call = specs is contract.call
    rules = contract.rules if is_call else contract.init_rules if specs is contract.init else ()

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        if outermost() and (cls is None or type(args[0]).__dict__.get("__d2l_contract__") == name):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{name}: {error}") from None
            arguments = dict(bound.arguments)
            obj = None if cls is None else arguments.pop(next(iter(signature.parameters)))
            if not (
                fw and any(fw.symbolic(v) for v in arguments.values())
            ):  # not a graph being built
                dims = (
                    contract.dims(obj, fw)
                    if (obj is not None and contract.dims and specs is not contract.init)
                    else {}
                )
                call = check(label or name, specs, arguments, obj, fw, dims, rules)
                if is_call and contract.built:
                    _check_built(
                        name, obj, {k: arguments[k] for k in contract.built if k in arguments}
                    )
                if call.passed_on:
                    bound.arguments.update(call.passed_on)
                    args, kwargs = bound.args, bound.kwargs
        with _inside():
            return function(*args, **kwargs)

    try:  # Keras 3 reads a layer's config from inspect.getfullargspec, which reads __signature__ only
        guarded.__signature__ = inspect.signature(function)
    except ValueError:
        pass
    return guarded


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


def unnamed(signature, specs, fw, method):
    """The parameters of ``signature`` that ``specs`` do not name (but ``*args``, ``**kwargs`` and the framework's
    own, such as Keras' ``training``)."""
    parameters = list(signature.parameters.values())[1 if method else 0 :]
    return [
        p.name
        for p in parameters
        if p.name not in specs
        and p.name not in fw.OWN_ARGUMENTS
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _stale(name, signature, specs, fw, method):
    """Warn when ``signature`` has parameters that the contract's ``specs`` do not name (a class redefined on a
    page with a new argument): they are passed on unchecked."""
    extra = unnamed(signature, specs, fw, method)
    if extra:
        warnings.warn(
            f"{name} takes {', '.join(extra)}, which its contract (d2lcore.contracts.{name.split('.')[0]}) does "
            "not name: those arguments are passed on unchecked",
            stacklevel=4,
        )


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
        signature = inspect.signature(obj)
        _stale(name, signature, contract.call, fw, False)
        return _guard(obj, name, contract.call, fw, contract, signature)
    obj.__d2l_contract__ = name
    for part, specs in contract.parts().items():
        if not specs:
            continue
        if (
            part == "call"
        ):  # checked before the framework's call runs forward (or Keras' build and call)
            target, signature = "__call__", fw.call_signature(obj)
        else:
            target, signature = part, inspect.signature(getattr(obj, part))
        label = name if part in ("__init__", "call") else f"{name}.{part}"
        _stale(label, signature, specs, fw, True)
        setattr(
            obj,
            target,
            _guard(getattr(obj, target), name, specs, fw, contract, signature, obj, label),
        )
    return obj


class AnyFramework:
    """The hooks of the framework-neutral code (text, BLEU, plotting), whose tensors are NumPy arrays or any
    framework's (read with :func:`d2lcore.convert.to_numpy`)."""

    TENSOR = "a tensor or array"
    OWN_ARGUMENTS = ()

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

    @staticmethod
    def symbolic(x):
        return False


def checked(obj):
    """``@checked`` of the framework-neutral taught code: attach the contract of ``obj`` (see :func:`attach`)."""
    return attach(obj, AnyFramework)
