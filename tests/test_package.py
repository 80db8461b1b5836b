"""The readers' package: the wheel holds d2lcore and the corpus (read with importlib.resources), not the book's
build tools; its metadata names one extra per framework. Built here without network (--no-isolation)."""

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import d2lcore
from d2lcore.frameworks import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Built from a copy of what the sdist holds, so that the build leaves nothing in the repository."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(ROOT / name, src / name)
    for folder in ("d2lcore", "data"):
        ignore = shutil.ignore_patterns("__pycache__", "downloads")
        shutil.copytree(ROOT / folder, src / folder, ignore=ignore)
    cmd = [
        sys.executable,
        "-m",
        "build",
        "--wheel",
        "--no-isolation",
        "--outdir",
        str(out),
        str(src),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    (path,) = out.glob("*.whl")
    return path


def test_wheel_contents(wheel):
    assert wheel.name == f"d2lcore-{d2lcore.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    corpus = {
        f"d2lcore/data/fra-eng/{n}" for n in ("fra.txt", "heldout.txt", "SHA256SUMS", "README.md")
    }
    corpus.add("d2lcore/data/measurements/bottleneck.json")
    assert corpus <= names
    for fw in REGISTRY.values():
        assert f"{fw.module.replace('.', '/')}/__init__.py" in names
    # every module of the source tree, subpackages included (a subpackage missing from pyproject.toml's list
    # would leave the wheel without it, and every notebook failing on its first import)
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "d2lcore").rglob("*.py")}
    assert sources <= names, sorted(sources - names)
    tops = {n.split("/")[0] for n in names}
    assert tops == {"d2lcore", f"d2lcore-{d2lcore.__version__}.dist-info"}, (
        tops
    )  # no booktools, no tests
    for name, data in ((n, zipfile.ZipFile(wheel).read(n)) for n in corpus):
        assert data == (ROOT / "data" / Path(name).relative_to("d2lcore/data")).read_bytes(), name


def test_wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as zf:
        meta = Parser().parsestr(
            zf.read(f"d2lcore-{d2lcore.__version__}.dist-info/METADATA").decode()
        )
    assert meta["Version"] == d2lcore.__version__
    assert meta["Requires-Python"] == "<3.13,>=3.11"
    assert set(meta.get_all("Provides-Extra")) == {fw.extra for fw in REGISTRY.values()}
    requires = meta.get_all("Requires-Dist")
    assert 'mxnet==1.9.1; extra == "mxnet"' in requires
    assert 'numpy<2,>=1.26; extra == "mxnet"' in requires  # MXNet 1.9.1 needs NumPy 1.x
    # and, on Python 3.12, the distutils of setuptools
    assert 'setuptools>=70; python_version >= "3.12" and extra == "mxnet"' in requires
    assert any(r.startswith("torch") and 'extra == "torch"' in r for r in requires)
    assert any(r.startswith("tensorflow>=") and 'extra == "tensorflow"' in r for r in requires)
    # the translation sections' corpus BLEU and chrF, in every framework
    assert any(r.startswith("sacrebleu") and "extra" not in r for r in requires)
    assert not any(
        "numpy<2" in r and "extra" not in r for r in requires
    )  # NumPy 2 allowed otherwise


def test_installed_wheel_reads_its_corpus_far_from_the_repository(wheel, tmp_path):
    """Unpacked like pip does, and imported in a Python that sees neither the repository nor this environment's
    editable install (-S: no site-packages; d2lcore.datasets needs only the standard library)."""
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import d2lcore, d2lcore.datasets as d\n"
        "assert d.data_dir().is_relative_to(sys.argv[1]), d.data_dir()\n"
        "train, heldout = d.read_data_nmt('train'), d.read_data_nmt('heldout')\n"
        "print(d2lcore.__file__, len(train.splitlines()), len(heldout.splitlines()))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-S", "-c", code, str(target)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    where, train, heldout = run.stdout.split()
    assert Path(where).is_relative_to(target)
    assert int(train) > 1000 and int(heldout) > 100


@pytest.mark.parametrize("framework", sorted(REGISTRY))
def test_standalone_installs_the_tested_framework_release(framework):
    """`make standalone` gives a reader's fresh venv the release this venv was tested with, read from
    requirements.txt under the name the extra installs (TensorFlow's -cpu build here, `tensorflow` there)."""
    from importlib.metadata import PackageNotFoundError, version

    from booktools.standalone import tested_pin

    name, _, pinned = tested_pin(framework).partition("==")
    assert name == REGISTRY[framework].extra
    try:
        installed = version(name)
    except PackageNotFoundError:
        installed = version(f"{name}-cpu")
    assert pinned == installed.partition("+")[0]  # torch's CPU wheel is 2.13.0+cpu
