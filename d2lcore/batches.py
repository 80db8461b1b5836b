"""Minibatches drawn from NumPy arrays, for every framework (framework-neutral).

Each framework's ``load_array`` turns the arrays' rows into its own tensors; the order of
the examples is drawn here, with NumPy's global generator, so that after the same
``set_seed`` every framework sees the same batches.
"""

import numpy

from d2lcore.contracts.engine import check_int
from d2lcore.convert import to_numpy


def as_arrays(data_arrays):
    """``data_arrays`` (NumPy arrays or tensors with equal first dimensions) as a list of
    NumPy arrays, checked."""
    if not isinstance(data_arrays, list | tuple) or not data_arrays:
        raise TypeError(
            "data_arrays must be a non-empty list or tuple of arrays; got "
            f"{type(data_arrays).__name__} {data_arrays!r:.40}"
        )
    arrays = []
    for i, a in enumerate(data_arrays):
        a = numpy.asarray(to_numpy(a))
        if a.ndim == 0:
            raise ValueError(f"data_arrays[{i}] is a scalar; give arrays of examples")
        arrays.append(a)
    sizes = [len(a) for a in arrays]
    if len(set(sizes)) != 1:
        raise ValueError(f"data_arrays must have equal first dimensions; got {sizes}")
    return arrays


class Minibatches:
    """Re-iterable: each ``for`` loop over it is one epoch, in a new order if ``is_train``.

    Yields tuples ``(to_tensor(rows of array 0), to_tensor(rows of array 1), ...)`` of
    ``batch_size`` examples (the last batch smaller if the number of examples is not a
    multiple of it)."""

    def __init__(self, arrays, batch_size, is_train, to_tensor):
        self.arrays = as_arrays(arrays)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.is_train, self.to_tensor = is_train, to_tensor
        self.num_examples = len(self.arrays[0])

    def __len__(self):
        return -(-self.num_examples // self.batch_size)

    def __iter__(self):
        if self.is_train:
            order = numpy.random.permutation(self.num_examples)
        else:
            order = numpy.arange(self.num_examples)
        for start in range(0, self.num_examples, self.batch_size):
            idx = order[start : start + self.batch_size]
            yield tuple(self.to_tensor(a[idx]) for a in self.arrays)
