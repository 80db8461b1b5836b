"""One Jupyter kernel per framework, installed into the virtual environment: the book's build facts about its
kernels (names, environment variables), which nothing a reader runs needs.

All three run the environment's Python; they differ in their name (notebooks of one framework open with their
kernel) and display name. Their environment variables are the same: :data:`KERNEL_ENV`.
"""

import json
import sys
from pathlib import Path

from d2lcore.frameworks import FRAMEWORKS, REGISTRY

MATPLOTLIBRC = Path(__file__).with_name("matplotlibrc")
"""The book kernels' matplotlib settings: a fixed SVG hash salt."""

QUIET_TENSORFLOW = {
    "TF_CPP_MIN_LOG_LEVEL": "2",  # TensorFlow's C++ start-up lines (info, warnings) would end up in the outputs
    "TF_ENABLE_ONEDNN_OPTS": "0",  # and the notice that its oneDNN operations are on
}
"""What keeps TensorFlow's start-up log lines out of the book's outputs, in the book's kernels only: its errors
still show. Importing ``d2lcore.tensorflow`` sets nothing, so a reader's own kernel shows TensorFlow's lines."""

KERNEL_ENV = {
    **QUIET_TENSORFLOW,
    "PYTHONHASHSEED": "0",
    "PYTHONWARNINGS": "ignore::DeprecationWarning,ignore::FutureWarning",
}
"""Environment variables of every framework kernel of the book."""

# No thread settings in the kernels: d2lcore chooses the CPU threads when it is imported, in any kernel
# (d2lcore.threads), so the book runs as a reader's plain python3 kernel does.

KERNELS = {name: f"d2l-{name}" for name in FRAMEWORKS}
"""The name of each framework's Jupyter kernel."""


def _known(framework):
    if framework not in KERNELS:
        raise ValueError(f"framework must be one of {', '.join(FRAMEWORKS)}; got {framework!r}")
    return framework


def kernel_env(framework):
    """The environment variables of a framework's kernel."""
    _known(framework)
    return {**KERNEL_ENV, "MATPLOTLIBRC": str(MATPLOTLIBRC)}


def install_kernels(prefix=sys.prefix):
    """Write the kernel specs into ``<prefix>/share/jupyter/kernels``; return their folders."""
    folders = []
    for framework, kernel in KERNELS.items():
        folder = Path(prefix) / "share" / "jupyter" / "kernels" / kernel
        folder.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [
                *(sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"),
                "--IPKernelApp.log_level=ERROR",  # not the warning about local unencrypted TCP
            ],
            "display_name": f"Python 3 ({REGISTRY[framework].label})",
            "language": "python",
            "env": kernel_env(framework),
            "metadata": {"debugger": True},
        }
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        folders.append(folder)
    return folders
