"""d2lcore.torch and d2lcore.mxnet give their framework one CPU thread, d2lcore.tensorflow one thread per pool,
unless the reader chose; each case in a fresh Python."""

import os
import subprocess
import sys

import pytest

CODE = "from d2lcore import torch as d2l\nimport torch\nprint(torch.get_num_threads())"
VARIABLES = (
    "OMP_NUM_THREADS",
    "D2L_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
)
MXNET = "import os\nfrom d2lcore import mxnet as d2l\nprint(os.environ.get('OMP_NUM_THREADS'))"


def threads(code=CODE, **env):
    base = {k: v for k, v in os.environ.items() if k not in VARIABLES}
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


TENSORFLOW = (
    "from d2lcore import tensorflow as d2l\nimport tensorflow as tf\n"
    "print(tf.config.threading.get_intra_op_parallelism_threads(),"
    " tf.config.threading.get_inter_op_parallelism_threads())"
)


def test_tensorflow_gets_one_thread_per_pool_unless_the_reader_chose():
    assert threads(TENSORFLOW) == "1 1"
    assert threads(TENSORFLOW, D2L_NUM_THREADS="2") == "2 1"
    # TensorFlow's own variables: d2lcore leaves its pools alone (0: TensorFlow decides)
    assert threads(TENSORFLOW, TF_NUM_INTEROP_THREADS="2") == "0 0"
    assert threads(TENSORFLOW, OMP_NUM_THREADS="2") == "1 1"  # not TensorFlow's variable


def test_tensorflow_that_already_ran_keeps_its_pools_with_a_warning():
    code = "import tensorflow as tf\ntf.constant(1) + 1\n" + TENSORFLOW
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={k: v for k, v in os.environ.items() if k != "D2L_NUM_THREADS"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0 0"
    assert "TensorFlow ran before d2lcore.tensorflow was imported" in run.stderr
    assert "Import d2lcore first" in run.stderr
