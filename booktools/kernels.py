"""One Jupyter kernel per framework, installed into the virtual environment.

All three run the environment's Python; they differ in their name (notebooks of one framework open with their
kernel) and in environment variables: TensorFlow's C++ log lines are silenced so they do not reach outputs, and
MXNet gets one OpenMP thread. On the 2-core machine a second thread made the section 4 and 7 training runs slower
(100 vs 89 s and 53 vs 44 s), and 10-40 times slower when another process was busy, as its idle thread
spin-waits.
"""

import json
import sys
from pathlib import Path

from booktools.paths import KERNELS, LABELS

COMMON_ENV = {
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_ENABLE_ONEDNN_OPTS": "0",  # also makes TensorFlow's CPU results reproducible
    "PYTHONHASHSEED": "0",
    "PYTHONWARNINGS": "ignore::DeprecationWarning,ignore::FutureWarning",
}


def kernel_env(framework):
    """The environment variables of a framework's kernel."""
    env = dict(COMMON_ENV)
    if framework == "mxnet":
        env["OMP_NUM_THREADS"] = "1"
    return env


def install_kernels(prefix=sys.prefix):
    """Write the kernel specs into ``<prefix>/share/jupyter/kernels``; return their folders."""
    folders = []
    for framework, name in KERNELS.items():
        folder = Path(prefix) / "share" / "jupyter" / "kernels" / name
        folder.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [
                *(sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"),
                "--IPKernelApp.log_level=ERROR",  # not the warning about local unencrypted TCP
            ],
            "display_name": f"Python 3 ({LABELS[framework]})",
            "language": "python",
            "env": kernel_env(framework),
            "metadata": {"debugger": True},
        }
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        folders.append(folder)
    return folders
