"""d2lcore.torch and d2lcore.mxnet give their framework one CPU thread unless the reader chose; each case in a
fresh Python."""

import os
import subprocess
import sys

import pytest

CODE = "from d2lcore import torch as d2l\nimport torch\nprint(torch.get_num_threads())"
MXNET = "import os\nfrom d2lcore import mxnet as d2l\nprint(os.environ.get('OMP_NUM_THREADS'))"


def threads(code=CODE, **env):
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "D2L_NUM_THREADS")}
    run = subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True
    )
    return run.stdout.strip() if run.returncode == 0 else run.stderr.strip().splitlines()[-1]


def test_one_thread_by_default():
    assert threads() == "1"


def test_the_readers_choice_wins():
    assert threads(OMP_NUM_THREADS="2") == "2"
    assert threads(D2L_NUM_THREADS="2") == "2"
    assert threads(OMP_NUM_THREADS="2", D2L_NUM_THREADS="1") == "1"


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5", ""])
def test_a_bad_thread_count_is_a_clear_error(bad):
    assert threads(D2L_NUM_THREADS=bad) == (
        f"ValueError: D2L_NUM_THREADS must be a whole number of threads >= 1; got {bad!r}. "
        "Unset it for d2lcore's default of 1."
    )


def test_mxnet_gets_one_openmp_thread_unless_the_reader_chose():
    assert threads(MXNET) == "1"
    assert threads(MXNET, OMP_NUM_THREADS="2") == "2"
    assert threads(MXNET, D2L_NUM_THREADS="2") == "2"
    assert threads(MXNET, D2L_NUM_THREADS="x").startswith("ValueError: D2L_NUM_THREADS must be")
