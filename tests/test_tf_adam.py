"""d2lcore.tensorflow's ClippedAdam: tf.clip_by_global_norm, then the update of Keras's Adam, bit for bit."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from d2lcore.tensorflow.training import ClippedAdam  # noqa: E402


def _gradients(step, shapes, rng):
    """Gradients of step ``step``: a big one first (clipped), then small ones (not clipped)."""
    scale = 10.0 if step == 0 else 0.01
    return [rng.normal(scale=scale, size=shape).astype(np.float32) for shape in shapes]


def test_clipped_adam_is_keras_adam_after_clipping_bit_for_bit():
    shapes = [(3, 4), (4,), (5, 2)]
    rng = np.random.default_rng(0)
    start = [rng.normal(size=shape).astype(np.float32) for shape in shapes]
    ours = [keras.Variable(w) for w in start]
    theirs = [keras.Variable(w) for w in start]
    optimizer = ClippedAdam(ours, lr=0.005, max_norm=1)
    keras_adam = keras.optimizers.Adam(learning_rate=0.005, epsilon=1e-8)
    keras_adam.build(theirs)
    apply = tf.function(optimizer.apply)

    @tf.function  # as train_seq2seq used it before
    def keras_apply(grads):
        clipped, _ = tf.clip_by_global_norm(grads, 1)
        pairs = [(g, w) for g, w in zip(clipped, theirs, strict=True) if g is not None]
        keras_adam.apply_gradients(pairs)

    for step in range(5):
        grads = [tf.constant(g) for g in _gradients(step, shapes, rng)]
        if step == 2:  # a weight without gradient: Keras leaves it and its moments
            grads[1] = None
        apply(grads)
        keras_apply(grads)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    # The weights moved: five steps of about lr each
    assert not np.allclose(ours[0].numpy(), start[0], atol=0.01)


def test_clipped_adam_leaves_a_weight_without_gradient():
    used, unused = keras.Variable(np.ones(3, np.float32)), keras.Variable(np.ones(2, np.float32))
    optimizer = ClippedAdam([used, unused], lr=0.1, max_norm=1)
    tf.function(optimizer.apply)([tf.constant([1.0, -1.0, 0.5]), None])
    np.testing.assert_array_equal(unused.numpy(), np.ones(2))
    # Adam's first step moves every weight by lr against the sign of its gradient
    np.testing.assert_allclose(used.numpy(), [0.9, 1.1, 0.9], rtol=1e-5)
