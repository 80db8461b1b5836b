"""Heads that learn different patterns: the page's MultiHeadAttention, trained on the neighbour task of the
multi-head attention page, must give one head to each neighbour, each putting its largest weight on that
neighbour's position for (nearly) every query.

The training run is the page's (same data, seed, initial weights, model and settings), in each framework: a few
seconds each.
"""

import importlib

import numpy as np
import pytest

from d2lcore import synthetic

# The page's settings (chapters/attention/multihead-attention.md, "Heads That Learn Different Patterns")
NUM_EXAMPLES, NUM_STEPS, NUM_SYMBOLS, SEED, LR, NUM_UPDATES = 500, 8, 8, 0, 0.05, 100


def test_neighbour_arrays_hold_the_one_hot_inputs_and_both_neighbours():
    X, Y = synthetic.neighbour_arrays(20, num_steps=5, num_symbols=3, seed=4)
    assert X.shape == (20, 5, 3 + 5) and X.dtype == np.float32
    assert Y.shape == (20, 5, 2) and Y.dtype == np.int32
    symbols = X[:, :, :3].argmax(axis=2)
    assert (X.sum(axis=2) == 2).all() and (X[:, :, :3].sum(axis=2) == 1).all()
    assert (X[:, :, 3:] == np.eye(5)).all()  # position i's one-hot code at every example
    for i in range(5):
        assert (Y[:, i, 0] == symbols[:, (i - 1) % 5]).all()
        assert (Y[:, i, 1] == symbols[:, (i + 1) % 5]).all()
    again = synthetic.neighbour_arrays(20, num_steps=5, num_symbols=3, seed=4)
    assert all((a == b).all() for a, b in zip(again, (X, Y)))
    assert not (synthetic.neighbour_arrays(20, 5, 3, seed=5)[1] == Y).all()


def test_show_neighbour_heads_counts_the_largest_weights():
    n = 6
    left, right = np.eye(n)[(np.arange(n) - 1) % n], np.eye(n)[(np.arange(n) + 1) % n]
    # head 1 uniform (its largest weight: position 0, argmax's first), head 2 on the right, head 3 on the left
    weights = np.stack([np.full((n, n), 1 / n), 0.6 * right + 0.4 / n, 0.7 * left + 0.3 / n])[None]
    record = synthetic.show_neighbour_heads(np.concatenate([weights, weights]))
    assert record.name == "heads"
    assert record == {"left": 1.0, "right": 1.0, "left_head": 3, "right_head": 2, "queries": 12}
    assert record.text.startswith(
        "head 1: largest weight on i - 1 for 16.7% of the queries, on i + 1 for 16.7%"
    )
    with pytest.raises(ValueError, match=r"weights must have shape \(batch, num_heads, n, n\)"):
        synthetic.show_neighbour_heads(np.ones((1, 2, 3, 4)))


def _train(framework, d2l, X, Y):
    """The page's training run in ``framework``: returns the trained layer."""
    multihead = importlib.import_module(f"{d2l.__name__}.multihead")
    d2l.set_seed(SEED)
    net = multihead.MultiHeadAttention(2 * NUM_SYMBOLS, num_heads=2, dropout=0)
    if framework == "mxnet":
        from mxnet import autograd, gluon
        from mxnet import np as mnp

        X, Y = mnp.array(X), mnp.array(Y)
        net.initialize()
        net(X, X, X)
        d2l.load_weights(net, d2l.xavier_uniform_weights(d2l.export_weights(net)))
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": LR})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        for _ in range(NUM_UPDATES):
            with autograd.record():
                loss = loss_fn(net(X, X, X).reshape(-1, NUM_SYMBOLS), Y.reshape(-1)).mean()
            loss.backward()
            trainer.step(1)
    elif framework == "pytorch":
        import torch

        X, Y = torch.tensor(X), torch.tensor(Y, dtype=torch.long)
        net(X, X, X)
        d2l.load_weights(net, d2l.xavier_uniform_weights(d2l.export_weights(net)))
        optimizer = torch.optim.Adam(net.parameters(), lr=LR)
        loss_fn = torch.nn.CrossEntropyLoss()
        for _ in range(NUM_UPDATES):
            loss = loss_fn(net(X, X, X).reshape(-1, NUM_SYMBOLS), Y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        net.eval()
    else:
        import keras
        import tensorflow as tf

        X, Y = tf.constant(X), tf.constant(Y)
        net(X, X, X)
        d2l.load_weights(net, d2l.xavier_uniform_weights(d2l.export_weights(net)))
        optimizer = keras.optimizers.Adam(LR)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        @tf.function
        def train_step():
            with tf.GradientTape() as tape:
                logits = tf.reshape(net(X, X, X, training=True), (-1, NUM_SYMBOLS))
                loss = loss_fn(tf.reshape(Y, (-1,)), logits)
            grads = tape.gradient(loss, net.trainable_variables)
            optimizer.apply_gradients(zip(grads, net.trainable_variables))

        for _ in range(NUM_UPDATES):
            train_step()
    return net


def test_trained_heads_take_one_neighbour_each(framework, d2l, tensor, capsys):
    net = _train(
        framework, d2l, *d2l.neighbour_arrays(NUM_EXAMPLES, NUM_STEPS, NUM_SYMBOLS, seed=0)
    )
    X_new = tensor(d2l.neighbour_arrays(100, NUM_STEPS, NUM_SYMBOLS, seed=1)[0])
    net(X_new, X_new, X_new, **({"training": False} if framework == "tensorflow" else {}))
    record = d2l.show_neighbour_heads(net.attention_weights)
    with capsys.disabled():
        print(f" left {record['left']:.3f} (head {record['left_head']}), "
              f"right {record['right']:.3f} (head {record['right_head']})", end=" ")  # fmt: skip
    assert record["left_head"] != record["right_head"], (
        f"one head serves both neighbours: {record.text}"
    )
    assert record["left"] >= 0.95 and record["right"] >= 0.95, record.text
