"""Random seeds, devices and CPU threads for TensorFlow."""

import warnings

import keras
import tensorflow as tf

from d2lcore.contracts.engine import check_int
from d2lcore.threads import TENSORFLOW, cpu_threads


def set_seed(seed):
    """Seed Python's, NumPy's and TensorFlow's random number generators, and reset Keras'
    global state (keras.backend.clear_session), so that a run repeated in one process
    gives the same numbers bit for bit. Without the reset, layer names go on counting
    (dense_9, then dense_10, ...): the second run's graphs then differ in their names,
    which can change the order in which TensorFlow adds up gradients (results that
    differed by 1e-7 after a few epochs, then more). Layers made before keep working. The
    reset skips the garbage collection that Keras runs with it by default: it frees no state
    that the numbers depend on, and in a process holding many objects it takes seconds."""
    check_int("seed", seed, minimum=0)
    keras.backend.clear_session(free_memory=False)
    keras.utils.set_random_seed(seed)  # seeds `random`, NumPy and TensorFlow


def num_gpus():
    """The number of GPUs TensorFlow can use."""
    return len(tf.config.list_logical_devices("GPU"))


def cpu():
    """The CPU device, a ``tf.config.LogicalDevice``; use it as ``with tf.device(device.name): ...``."""
    return tf.config.list_logical_devices("CPU")[0]


def try_gpu(i=0):
    """GPU ``i`` if it exists, else the CPU: a ``tf.config.LogicalDevice`` (its ``.name`` goes to ``tf.device``)."""
    check_int("i", i, minimum=0)
    gpus = tf.config.list_logical_devices("GPU")
    return gpus[i] if len(gpus) > i else cpu()


def apply_threads():
    """One intra-op and one inter-op thread unless the reader chose (see d2lcore.threads); with
    ``D2L_NUM_THREADS=n``, n intra-op threads and one inter-op thread. TensorFlow fixes its pools when it first
    runs something, so this must come first: ``d2lcore.tensorflow`` calls it when imported."""
    threads = cpu_threads(TENSORFLOW)
    if threads is None:
        return
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        warnings.warn(
            "TensorFlow ran before d2lcore.tensorflow was imported, so its thread pools are already fixed and "
            "d2lcore could not give it one CPU thread (see the page Running the Notebooks). Import d2lcore "
            "first: restart the kernel and run the cells from the top.",
            stacklevel=3,
        )


__all__ = [
    "cpu",
    "num_gpus",
    "set_seed",
    "try_gpu",
]  # the names d2lcore.tensorflow re-exports
