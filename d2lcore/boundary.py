"""Argument checks at the boundary of the taught code (framework-neutral).

A class or function that a page teaches holds the model alone. Its argument checks live in one place per framework
(``d2lcore/<framework>/checks.py``), registered under the taught name in that framework's :class:`Checks`, and
the page attaches them with one line, the decorator ``@d2l.checked``:

- for a class, the registered *init* check runs before ``__init__`` with the constructor's arguments, and the
  registered *call* check runs before ``__call__`` (the framework's entry: PyTorch's and Gluon's ``__call__`` run
  ``forward``, Keras' runs ``build`` and ``call``) with the layer and the call's arguments;
- for a function, the call check runs before it with its arguments;
- for another method of a class, a check registered as ``"Class.method"`` (a decoder's ``init_state``, say) runs
  before it with the object and the method's arguments.

A check raises the error that names the bad argument, or returns ``None``, or returns ``(args, kwargs)`` to pass
on instead (a list of lengths made a tensor, say). Checks run once per outermost call: while a checked layer or
function runs, the checked layers and functions it calls are not checked again (their inputs come from a checked
call), so a Transformer's blocks do not read the same lengths back from the device once per block.

The checks are found by the taught name (``AdditiveAttention``), so a class that a notebook defines again, with the
same name and the decorator, gets the same checks as d2lcore's. The framework-neutral code's checks are in
:data:`NEUTRAL`, where every framework's registry looks for a name it does not hold. A subclass that is not
decorated itself runs without checks of its own: its arguments may differ from its parent's.
"""

import functools
import inspect
import threading

_state = threading.local()


def _depth():
    return getattr(_state, "depth", 0)


class _Inside:
    """``with _Inside():`` marks the code of a checked call (calls inside it are not checked again)."""

    def __enter__(self):
        _state.depth = _depth() + 1

    def __exit__(self, *exc):
        _state.depth -= 1
        return False


def outermost():
    """Whether no checked call is running (in this thread): a check runs only then."""
    return _depth() == 0


class Checks:
    """One framework's checks of its taught classes and functions, by taught name."""

    def __init__(self):
        self.init_checks, self.call_checks = {}, {}

    def init(self, name):
        """Decorator: register ``check(*args, **kwargs)`` for the constructor of the class ``name``."""

        def register(check):
            self.init_checks[name] = check
            return check

        return register

    def call(self, name):
        """Decorator: register the call check of ``name``: ``check(layer, *args, **kwargs)`` for a class,
        ``check(*args, **kwargs)`` for a function, ``check(obj, *args, **kwargs)`` for ``"Class.method"``."""

        def register(check):
            self.call_checks[name] = check
            return check

        return register

    def checked(self, obj):
        """The decorator of the taught classes and functions: attach the checks registered under ``obj``'s name
        here, or else in :data:`NEUTRAL` (see the module's docstring). Returns the class itself, or a function
        wrapping the function."""
        name = obj.__name__
        init = self.init_checks.get(name, NEUTRAL.init_checks.get(name))
        call = self.call_checks.get(name, NEUTRAL.call_checks.get(name))
        methods = [
            k
            for k in (*self.call_checks, *NEUTRAL.call_checks)
            if k.startswith(name + ".")
        ]
        if init is None and call is None and not methods:
            raise LookupError(
                f"d2lcore has no checks of {name!r} to attach; remove @checked"
            )
        if not isinstance(obj, type):
            return _checked_function(obj, call)
        obj.__d2l_checked__ = name
        obj.__init__ = _checked_method(obj, obj.__init__, init, pass_self=False)
        obj.__call__ = _checked_method(obj, obj.__call__, call, pass_self=True)
        for key, check in {**NEUTRAL.call_checks, **self.call_checks}.items():
            owner, _, method = key.partition(".")
            if owner == name and method:
                setattr(
                    obj, method, _checked_method(obj, getattr(obj, method), check, True)
                )
        return obj


NEUTRAL = Checks()
"""The checks of the framework-neutral taught code (text, vocabularies, BLEU, plotting: ``d2lcore/checks.py``),
which every framework's ``checked`` also finds."""


def _run(check, args, kwargs):
    """Run ``check`` if it exists and no checked call is running; return the arguments to pass on."""
    if check is None or not outermost():
        return args, kwargs
    changed = check(*args, **kwargs)
    return (args, kwargs) if changed is None else changed


def _checked_function(function, check):
    @functools.wraps(function)
    def checked(*args, **kwargs):
        args, kwargs = _run(check, args, kwargs)
        with _Inside():
            return function(*args, **kwargs)

    return checked


def _checked_method(cls, method, check, pass_self):
    """``method`` (``__init__`` or ``__call__`` of ``cls``) with ``check`` before it, for instances of ``cls``
    itself or of a decorated subclass (whose own check then runs first, as the outermost)."""

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        if type(self).__dict__.get("__d2l_checked__") == cls.__name__:
            if pass_self:
                args, kwargs = _run(check, (self, *args), kwargs)
                self, *args = args
            else:
                args, kwargs = _run(check, args, kwargs)
        with _Inside():
            return method(self, *args, **kwargs)

    # The method's own signature for every introspection: inspect.signature follows __wrapped__, but
    # inspect.getfullargspec reads __signature__ only (Keras 3 builds a layer's config from both).
    try:
        checked.__signature__ = inspect.signature(method)
    except ValueError:  # a builtin without one: the wrapper's own stands
        pass
    return checked
