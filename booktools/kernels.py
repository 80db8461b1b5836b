"""One Jupyter kernel per framework, installed into the virtual environment.

All three run the environment's Python; they differ in their name (notebooks of one framework open with their
kernel) and in environment variables, both read from the framework registry (:mod:`d2lcore.frameworks`).
"""

import json
import sys
from pathlib import Path

from d2lcore.frameworks import KERNEL_ENV, REGISTRY, get

MATPLOTLIBRC = Path(__file__).with_name("matplotlibrc")
"""The book kernels' matplotlib settings: a fixed SVG hash salt."""


def kernel_env(framework):
    """The environment variables of a framework's kernel."""
    return {**KERNEL_ENV, "MATPLOTLIBRC": str(MATPLOTLIBRC), **get(framework).kernel_env}


def install_kernels(prefix=sys.prefix):
    """Write the kernel specs into ``<prefix>/share/jupyter/kernels``; return their folders."""
    folders = []
    for framework, fw in REGISTRY.items():
        folder = Path(prefix) / "share" / "jupyter" / "kernels" / fw.kernel
        folder.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [
                *(sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"),
                "--IPKernelApp.log_level=ERROR",  # not the warning about local unencrypted TCP
            ],
            "display_name": fw.kernel_display_name,
            "language": "python",
            "env": kernel_env(framework),
            "metadata": {"debugger": True},
        }
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        folders.append(folder)
    return folders
