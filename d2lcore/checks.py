"""Argument checks shared by all frameworks, with error messages that say what was expected."""

import re

_DIM = re.compile(r"^(\d+|[A-Za-z_]\w*)$")


def _shape_of(x):
    shape = getattr(x, "shape", None)
    if shape is None:
        return None
    return tuple(None if d is None else int(d) for d in shape)


def check_shapes(**named):
    """Check tensor shapes against named dimensions and return the sizes found.

    Each keyword is an argument name; its value is a pair ``(tensor, spec)``, where ``spec`` names the
    dimensions separated by spaces, e.g. ``"batch queries keys"``. A number fixes a dimension's size; a name must
    have the same size wherever it appears. Example::

        dims = check_shapes(queries=(q, "n"), keys=(k, "n m"), values=(v, "n m"))  # dims == {"n": .., "m": ..}

    Raises ``TypeError`` if an argument is not a tensor and ``ValueError`` naming the argument and the expected
    shape if a rank or a size is wrong.
    """
    sizes = {}
    for arg, (x, spec) in named.items():
        dims = spec.split()
        if not all(_DIM.match(d) for d in dims):
            raise ValueError(
                f"bad shape spec {spec!r} for {arg!r}: use names or numbers separated by spaces"
            )
        shape = _shape_of(x)
        if shape is None:
            raise TypeError(
                f"{arg} must be a tensor of shape ({', '.join(dims)}); got {type(x).__name__}"
            )
        if len(shape) != len(dims):
            raise ValueError(
                f"{arg} must have {len(dims)} dimension(s), shape ({', '.join(dims)}); got shape {shape}"
            )
        for d, n in zip(dims, shape, strict=True):
            if n is None:
                continue
            expected = int(d) if d.isdigit() else sizes.setdefault(d, n)
            if n != expected:
                known = ", ".join(
                    d if d.isdigit() else str(sizes.get(d, d)) for d in dims
                )
                why = (
                    "" if d.isdigit() else f" ({d} = {expected} from the other arguments)"
                )
                raise ValueError(
                    f"{arg} must have shape ({', '.join(dims)}) = ({known}); got shape {shape}{why}"
                )
    return sizes


def check_int(name, value, minimum=None):
    """Check that ``value`` is a Python integer (not a bool) of at least ``minimum``; return it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    return value


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
            "load_weights: the weights do not fit the layer: " + ", ".join(problems)
        )


def check_heads(num_hiddens, num_heads):
    """Check that ``num_heads`` is an int >= 1 that divides ``num_hiddens`` (each head gets
    num_hiddens / num_heads features); ``num_hiddens`` None (not known yet) is not checked.
    Returns num_heads."""
    check_int("num_heads", num_heads, minimum=1)
    if num_hiddens is not None and num_hiddens % num_heads:
        raise ValueError(
            f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads}): "
            "each head gets num_hiddens / num_heads features"
        )
    return num_heads


def valid_lens_spec(valid_lens, queries="queries"):
    """The shape of ``valid_lens`` for :func:`check_shapes`: ``"batch"`` for (batch,) lengths,
    one per example, or ``"batch <queries>"`` for (batch, queries) lengths, one per query.
    Raises ValueError for any other rank."""
    shape = _shape_of(valid_lens)
    if shape is None or len(shape) not in (1, 2):
        raise ValueError(
            f"valid_lens must have shape (batch,) or (batch, queries); got shape {shape}"
        )
    return "batch" if len(shape) == 1 else f"batch {queries}"


def check_lengths(name, values):
    """Check that the lengths ``values`` (a NumPy array, e.g. of valid_lens) are whole
    numbers >= 0; ValueError listing them otherwise."""
    if (values != values.round()).any():
        raise ValueError(f"{name} must hold whole numbers; got {values.tolist()}")
    if (values < 0).any():
        raise ValueError(f"{name} must be >= 0; got {values.tolist()}")


def check_positions(X, num_hiddens, offset, max_len):
    """For a positional encoding: X (batch, steps, num_hiddens) takes the positions offset,
    ..., offset + steps - 1 of a table of ``max_len`` positions. Returns steps (None when it
    is unknown, as in a traced TensorFlow graph: the caller checks it when it runs)."""
    steps = check_shapes(X=(X, "batch steps num_hiddens")).get("steps")
    shape = _shape_of(X)
    if shape[-1] not in (None, num_hiddens):
        raise ValueError(
            f"X's last dimension must be num_hiddens = {num_hiddens}; got X of shape {shape}"
        )
    check_int("offset", offset, minimum=0)
    if steps is not None and offset + steps > max_len:
        raise ValueError(
            f"positions {offset} ... {offset + steps - 1} do not fit in the table of "
            f"max_len = {max_len} positions: raise max_len"
        )
    return steps
