"""The mechanism that attaches argument checks to the taught code from outside (d2lcore/boundary.py)."""

import pytest

from d2lcore.boundary import Checks, outermost

CHECKS = Checks()
seen = []


@CHECKS.init("Layer")
def _layer_init(width):
    seen.append(("init", width))
    if width < 1:
        raise ValueError(f"width must be >= 1; got {width}")


@CHECKS.call("Layer")
def _layer_call(layer, x, scale=1):
    seen.append(("call", x))
    if isinstance(x, list):  # a conversion: what the layer then receives
        return (layer, sum(x)), {"scale": scale}
    if x < 0:
        raise ValueError(f"x must be >= 0; got {x}")
    return None


@CHECKS.call("double")
def _double(x):
    seen.append(("double", x))
    if not isinstance(x, int):
        raise TypeError(f"x must be an int; got {type(x).__name__}")


@CHECKS.checked
def double(x):
    """Twice x."""
    return 2 * x


@CHECKS.checked
class Layer:
    def __init__(self, width):
        self.width = width
        self.inner = Inner(width) if width > 1 else None

    def __call__(self, x, scale=1):
        if self.inner is not None:
            self.inner(x)  # not checked again: inside a checked call
        return double(x) * self.width * scale


class Inner(Layer):  # a subclass that is not decorated: no checks of its own
    def __init__(self, width):
        self.width, self.inner = width, None


@pytest.fixture(autouse=True)
def clear():
    seen.clear()
    yield
    assert outermost()  # every checked call left the boundary, errors included


def test_a_function_is_checked_and_keeps_its_name_and_docstring():
    assert double(3) == 6 and seen == [("double", 3)]
    assert double.__name__ == "double" and double.__doc__ == "Twice x."
    with pytest.raises(TypeError, match="x must be an int; got str"):
        double("3")


def test_a_class_is_checked_at_construction_and_at_each_outermost_call():
    layer = Layer(2)
    assert seen == [("init", 2)]  # Inner(2), made inside Layer's __init__, is not checked
    assert layer(3) == 12 and seen == [("init", 2), ("call", 3)]  # once: not double's, nor Inner's
    with pytest.raises(ValueError, match="x must be >= 0; got -1"):
        layer(-1)
    with pytest.raises(ValueError, match="width must be >= 1; got 0"):
        Layer(0)


def test_a_check_may_convert_the_arguments():
    assert Layer(1)([1, 2], scale=2) == 12  # the check turned [1, 2] into 3


def test_checks_run_again_after_an_error_inside_the_call():
    layer = Layer(1)
    with pytest.raises(TypeError, match="unsupported operand"):
        layer(2, scale=None)  # passes the layer's check, fails inside the layer
    seen.clear()
    assert layer(1) == 2 and seen == [("call", 1)]


def test_an_undecorated_subclass_runs_without_its_parents_checks():
    inner = Inner(5)
    assert inner(-1) == -10 and seen == []


def test_nothing_registered_is_an_error():
    def triple(x):
        return 3 * x

    with pytest.raises(LookupError, match="no checks of 'triple'"):
        CHECKS.checked(triple)


def test_a_checked_class_keeps_its_constructors_signature():
    """Keras 3 builds a layer's config from inspect.getfullargspec(cls.__init__), which must not see the wrapper's
    (*args, **kwargs)."""
    import inspect

    assert str(inspect.signature(Layer.__init__)) == "(self, width)"
    assert inspect.getfullargspec(Layer.__init__).args == ["self", "width"]


@CHECKS.call("Decoder.init_state")
def _decoder_init_state(decoder, memory):
    if memory is None:
        raise ValueError("memory must be given; got None")


@CHECKS.checked
class Decoder:
    def init_state(self, memory):
        return ("state", memory)


def test_another_method_is_checked_when_registered_as_class_dot_method():
    decoder = Decoder()
    assert decoder.init_state(3) == ("state", 3)
    with pytest.raises(ValueError, match="memory must be given; got None"):
        decoder.init_state(None)
