"""The shared argument checks of d2lcore.checks: one message each, whatever the framework."""

import numpy as np
import pytest

from d2lcore import checks


def test_check_heads():
    assert checks.check_heads(12, 4) == 4
    assert checks.check_heads(None, 3) == 3  # width unknown yet: not checked
    with pytest.raises(
        ValueError, match=r"num_hiddens \(10\) must be divisible by num_heads \(4\)"
    ):
        checks.check_heads(10, 4)
    with pytest.raises(ValueError, match="num_heads must be >= 1"):
        checks.check_heads(8, 0)
    with pytest.raises(TypeError, match="num_heads must be an int"):
        checks.check_heads(8, 2.0)


def test_valid_lens_spec(tensor):
    assert checks.valid_lens_spec(tensor(np.array([1, 2]))) == "batch"
    assert checks.valid_lens_spec(tensor(np.ones((2, 3))), "n_q") == "batch n_q"
    with pytest.raises(
        ValueError,
        match=r"valid_lens must have shape \(batch,\) or \(batch, queries\); got shape \(\)",
    ):
        checks.valid_lens_spec(tensor(np.array(3)))
    with pytest.raises(ValueError, match=r"got shape \(1, 2, 3\)"):
        checks.valid_lens_spec(tensor(np.ones((1, 2, 3))))


def test_check_lengths():
    checks.check_lengths("valid_lens", np.array([0, 3.0, 2]))
    with pytest.raises(ValueError, match=r"valid_lens must hold whole numbers; got \[1.5, 2.0\]"):
        checks.check_lengths("valid_lens", np.array([1.5, 2.0]))
    with pytest.raises(ValueError, match=r"enc_valid_lens must be >= 0; got \[-1, 2\]"):
        checks.check_lengths("enc_valid_lens", np.array([-1, 2]))


def test_check_positions(tensor):
    X = tensor(np.zeros((2, 3, 4), dtype=np.float32))
    assert checks.check_positions(X, 4, 0, 3) == 3
    assert checks.check_positions(X, 4, 7, 10) == 3
    with pytest.raises(ValueError, match=r"positions 8 \.\.\. 10 do not fit .* max_len = 10"):
        checks.check_positions(X, 4, 8, 10)
    with pytest.raises(
        ValueError, match=r"X's last dimension must be num_hiddens = 5; got X of shape \(2, 3, 4\)"
    ):
        checks.check_positions(X, 5, 0, 10)
    with pytest.raises(ValueError, match="offset must be >= 0"):
        checks.check_positions(X, 4, -1, 10)
