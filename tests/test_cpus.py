"""The imitated other CPU of `make nbval` (booktools/cpus.py): its settings reach the libraries."""

import json
import os
import subprocess
import sys
from pathlib import Path

from booktools.cpus import CPUS, RESTRICTED

PROBE = """
import json
from numpy.core._multiarray_umath import __cpu_features__
import torch
print(json.dumps({"numpy_avx512f": __cpu_features__["AVX512F"],
                  "numpy_avx512_skx": __cpu_features__["AVX512_SKX"],
                  "torch": torch.backends.cpu.get_cpu_capability()}))
"""


def probe(extra):
    env = {**os.environ, **extra}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_restricted_cpu_has_no_avx512():
    found = probe(RESTRICTED)
    assert not found["numpy_avx512f"] and not found["numpy_avx512_skx"]
    assert found["torch"] in ("AVX2", "DEFAULT")  # DEFAULT on a CPU without AVX2 itself


def test_native_cpu_is_this_machines_own():
    """On a CPU with AVX-512 (this project's machines), the native settings use it and the restricted ones not:
    the restriction changes which kernels run."""
    assert CPUS["native"] == {}
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    native = probe({})
    assert native["numpy_avx512f"] == (" avx512f" in flags)
    if " avx512f" in flags and " avx512bw" in flags and " avx512vl" in flags:
        assert native["torch"] == "AVX512"


MXNET_PROBE = """
import d2lcore.mxnet
from mxnet import np, npx
print(npx.fully_connected(np.ones((4, 8)), np.ones((3, 8)), num_hidden=3, no_bias=True).sum())
"""


def test_restricted_cpu_reaches_mxnets_onednn():
    env = {**os.environ, **RESTRICTED, "DNNL_VERBOSE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", MXNET_PROBE], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    isa = [line for line in done.stdout.splitlines() if ",isa:" in line]
    assert isa and isa[0].endswith("isa:Intel AVX2"), done.stdout[:500]
