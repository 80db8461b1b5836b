"""MathJax served with the book, so that formulas render without a network (a laptop offline, the tests).

MathJax 3 comes from the npm registry (``npm pack``), is checked against a pinned SHA-256 and unpacked atomically
into _build/vendor/mathjax. Without npm the book falls back to MathJax from its CDN, which needs a network.
"""

import hashlib
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from booktools.paths import BUILD

MATHJAX = "mathjax@3.2.2"
MATHJAX_SHA256 = "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
VENDOR = BUILD / "vendor"
MATHJAX_DIR = VENDOR / "mathjax"


def ensure_mathjax():
    """The folder holding MathJax's ``tex-chtml.js`` and fonts, fetched if needed; None if it cannot be had."""
    if (MATHJAX_DIR / "tex-chtml.js").is_file():
        return MATHJAX_DIR
    npm = shutil.which("npm")
    if npm is None:
        print(
            "note: npm not found; the book will load MathJax from its CDN (formulas need a network)"
        )
        return None
    VENDOR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=VENDOR) as tmp:
        result = subprocess.run(
            [npm, "pack", MATHJAX, "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
        )
        tarballs = list(Path(tmp).glob("*.tgz"))
        if result.returncode != 0 or not tarballs:
            print(
                f"note: `npm pack {MATHJAX}` failed ({result.stderr.strip()[:200]}); using MathJax's CDN"
            )
            return None
        digest = hashlib.sha256(tarballs[0].read_bytes()).hexdigest()
        if digest != MATHJAX_SHA256:
            raise RuntimeError(
                f"{MATHJAX} from npm has SHA-256 {digest}, expected {MATHJAX_SHA256}: refusing it"
            )
        unpacked = Path(tmp) / "mathjax"
        with tarfile.open(tarballs[0]) as tar:
            members = [
                m for m in tar.getmembers() if m.name.startswith("package/es5/") and m.isfile()
            ]
            tar.extractall(tmp, members=members, filter="data")
        (Path(tmp) / "package" / "es5").rename(unpacked)
        unpacked.rename(MATHJAX_DIR)  # atomic: the folder appears complete or not at all
    return MATHJAX_DIR
