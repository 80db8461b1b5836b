"""Data files: the project's English–French corpus, and verified downloads of larger data sets.

Framework-neutral (Python standard library only). The corpus is read from :func:`data_dir`: the
folder named by the environment variable ``D2L_DATA_DIR``, else the copy installed with the
package (``d2lcore/data``; in a clone of the repository that is its ``data/`` folder).
Downloads go to :func:`download_dir` unless told otherwise.
"""

import contextlib
import hashlib
import http.client
import importlib.resources
import json
import os
import shutil
import stat
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from pathlib import Path, PurePosixPath, PureWindowsPath

TIMEOUT = 60
"""Seconds a download waits for the server (to connect, or for the next data) before failing."""

DEADLINE = 1800
"""Seconds a whole download may take, however the server trickles its data. Temporary
``.part`` files and folders older than this are left over from a killed download or
extraction: the next call removes them."""

MAX_EXTRACTED_BYTES = 1 << 30
"""The most bytes that extracting one archive may write (1 GiB)."""

MAX_RATIO = 200
"""The most that an archive's members may expand, in all, relative to the archive's size."""

_CHUNK = 1 << 20  # read, hash and write 1 MiB at a time
_ALGORITHMS = {"sha256": 64, "sha1": 40}  # algorithm -> length of its hex digest
_MARKER = (
    ".d2lcore-extracted"  # written last into an extracted folder: the archive's hash
)

DATA_HUB = {
    # The full Tatoeba English–French corpus (about 190,000 pairs; CC-BY 2.0 France,
    # tatoeba.org via manythings.org/anki), in d2l's stable mirror: a zip holding
    # fra-eng/fra.txt. The mirror publishes only this SHA-1 of the file, and we could find
    # no published SHA-256 of it, so this entry is checked with SHA-1; every other file of
    # the project is checked with SHA-256. (manythings.org's own fra-eng.zip is updated
    # over time, so no fixed checksum can describe it.)
    "fra-eng": (
        "https://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip",
        "sha1:94646ad1522d915e7b0f9296181140edcf86a4f5",
    ),
}
"""Registered downloads: ``name -> (url, "algorithm:hexdigest")``, algorithm sha256 or sha1."""

_SPLITS = {"train": "fra.txt", "heldout": "heldout.txt"}


class ChecksumError(ValueError):
    """A file's hash is not the one it must have."""


class DownloadError(OSError):
    """A download failed (network, server or truncated transfer); nothing was saved."""


class ArchiveError(ValueError):
    """An archive is unreadable or has members that would land outside its folder."""


def data_dir():
    """The folder of the project's data: ``$D2L_DATA_DIR`` if set, else the package data
    ``d2lcore.data`` (installed from the repository's ``data/`` folder, which an editable install
    in a clone reads in place). Returns a :class:`pathlib.Path`."""
    env = os.environ.get("D2L_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(str(importlib.resources.files("d2lcore.data")))


def download_dir():
    """Where :func:`download` saves files by default: ``$D2L_DATA_DIR/downloads`` if that
    variable is set, else the user's cache folder (``$XDG_CACHE_HOME/d2lcore``, by default
    ``~/.cache/d2lcore``), never inside the installed package. Returns a :class:`pathlib.Path`."""
    env = os.environ.get("D2L_DATA_DIR")
    if env:
        return Path(env).expanduser() / "downloads"
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "d2lcore"


def _parse_hash(spec, where):
    """``"sha256:<hex>"`` -> (algorithm, hexdigest), checked."""
    algorithm, _, digest = str(spec).partition(":")
    digest = digest.lower()
    size = _ALGORITHMS.get(algorithm)
    if (
        size is None
        or len(digest) != size
        or any(c not in "0123456789abcdef" for c in digest)
    ):
        raise ValueError(
            f"{where}: the hash must read 'sha256:<64 hex digits>' or 'sha1:<40 hex digits>';"
            f" got {spec!r}"
        )
    return algorithm, digest


def _hash_file(path, algorithm):
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _registered(name):
    """(url, algorithm, hexdigest, file name) of a DATA_HUB entry, checked."""
    if name not in DATA_HUB:
        raise ValueError(
            f"no data set named {name!r} is registered; DATA_HUB has: {sorted(DATA_HUB)}"
        )
    url, spec = DATA_HUB[name]
    algorithm, digest = _parse_hash(spec, f"DATA_HUB[{name!r}]")
    parts = urllib.parse.urlsplit(url)
    filename = PurePosixPath(urllib.parse.unquote(parts.path)).name
    if parts.scheme not in ("http", "https") or filename in ("", ".", ".."):
        raise ValueError(
            f"DATA_HUB[{name!r}] must be an http(s) URL ending in a file name; got {url!r}"
        )
    return url, algorithm, digest, filename


def _fetch(url, out, h):
    """Stream ``url`` into the open file ``out``, updating the hash ``h``; raise on failure,
    or when the whole transfer takes longer than DEADLINE seconds."""
    deadline = time.monotonic() + DEADLINE
    request = urllib.request.Request(url, headers={"User-Agent": "d2lcore"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            length = response.headers.get("Content-Length", "")
            expected = int(length) if length.strip().isdigit() else None
            received = 0
            # read1: what has arrived (up to 1 MiB), so that a trickle cannot outlast the
            # deadline inside one read
            while chunk := response.read1(_CHUNK):
                out.write(chunk)
                h.update(chunk)
                received += len(chunk)
                if time.monotonic() > deadline:
                    raise DownloadError(
                        f"the transfer took longer than DEADLINE = {DEADLINE} s (got "
                        f"{received} bytes so far); the server is too slow"
                    )
    except DownloadError:
        raise
    except urllib.error.HTTPError as e:
        raise DownloadError(f"the server answered HTTP {e.code} {e.reason}") from e
    except urllib.error.URLError as e:
        raise DownloadError(f"{e.reason}") from e
    except (http.client.HTTPException, OSError) as e:
        raise DownloadError(f"{type(e).__name__}: {e}") from e
    if expected is not None and received != expected:
        raise DownloadError(
            f"the transfer was cut short: got {received} of {expected} bytes"
        )


def download(name, cache_dir=None):
    """Download the registered file ``name`` (see ``DATA_HUB``) into ``cache_dir``.

    ``cache_dir`` defaults to :func:`download_dir`. A copy already there with the right
    hash is used without any network access. Otherwise the file is streamed into a temporary
    file in ``cache_dir``, hashed while it arrives, checked (length and hash) and only then
    renamed into place: a failed or interrupted download leaves nothing behind, and the
    ``.part`` file of a killed one is removed by a later call once it is older than
    DEADLINE. Raises :class:`DownloadError` (network, server, truncated transfer, a
    transfer longer than DEADLINE seconds, a folder where the file must go) or
    :class:`ChecksumError` (wrong content), both naming the URL or the path. Returns the
    file's :class:`pathlib.Path`.
    """
    url, algorithm, digest, filename = _registered(name)
    folder = download_dir() if cache_dir is None else Path(cache_dir)
    target = folder / filename
    if target.is_dir():
        raise DownloadError(
            f"{target} is a folder, where download({name!r}) must save a file: remove or "
            "rename that folder, or pass another cache_dir"
        )
    _remove_stale(folder, filename)
    if target.is_file() and _hash_file(target, algorithm) == digest:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    print(f"Downloading {url} to {target} ...", flush=True)
    # closed by `with tmp` below; removed on any failure
    tmp = tempfile.NamedTemporaryFile(
        delete=False, dir=folder, prefix=f".{filename}.", suffix=".part"
    )
    try:
        with tmp:
            h = hashlib.new(algorithm)
            try:
                _fetch(url, tmp, h)
            except DownloadError as e:
                raise DownloadError(
                    f"could not download {url}: {e}. Nothing was saved. To download it by "
                    f"hand, fetch that URL (e.g. `curl -L -o {target} {url}`) and save it as "
                    f"{target}; its {algorithm} must be {digest}."
                ) from e.__cause__
            tmp.flush()
            os.fsync(tmp.fileno())
        if h.hexdigest() != digest:
            raise ChecksumError(
                f"the file downloaded from {url} has the wrong {algorithm}: expected "
                f"{digest}, got {h.hexdigest()}. Nothing was saved; try again later, or "
                f"check DATA_HUB[{name!r}]."
            )
        os.chmod(tmp.name, 0o644)
        os.replace(tmp.name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp.name)
        raise
    return target


def _remove_stale(folder, name):
    """Remove the temporary ``.<name>.*.part`` files and folders (and ``.old`` folders) in
    ``folder`` that are older than DEADLINE: a killed download or extraction left them.
    Younger ones may belong to a download running in another process."""
    if not folder.is_dir():
        return
    too_old = time.time() - DEADLINE
    for path in folder.glob(f".{name}.*"):
        if path.suffix not in (".part", ".old"):
            continue
        with contextlib.suppress(FileNotFoundError):
            if path.lstat().st_mtime < too_old:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink()


def _archive_stem(filename):
    """(folder name, kind) for an archive file name: ``x.zip`` -> ("x", "zip")."""
    if filename.lower().endswith(".zip") and len(filename) > len(".zip"):
        return filename[: -len(".zip")], "zip"
    raise ArchiveError(f"{filename}: not a .zip archive")


def _member_problem(member, root):
    """Why an archive member name must not be extracted under ``root`` (None if it is safe)."""
    if "\\" in member:
        return "has a backslash in its path"
    if member.startswith("/") or PureWindowsPath(member).drive:
        return "has an absolute path"
    if ".." in PurePosixPath(member).parts:
        return "has a '..' component"
    dest = (root / member).resolve()
    if not dest.is_relative_to(root):
        return "would land outside the folder"
    return None


def _check_members(archive, members, root):
    """``members``: (name, is_dir, is_regular) triples; raise ArchiveError on the first bad one."""
    for name, is_dir, is_regular in members:
        why = None if is_dir or is_regular else "is a link or a special file"
        why = why or _member_problem(name, root)
        if why:
            raise ArchiveError(f"refusing to extract {archive}: member {name!r} {why}")


def _check_size(archive, total):
    """Refuse an archive whose members expand to more than MAX_EXTRACTED_BYTES, or more than
    MAX_RATIO times its own size (a zip bomb). zipfile reads no member beyond the size that
    the archive declares, so the declared sizes bound what is written."""
    size = max(archive.stat().st_size, 1)
    if total > MAX_EXTRACTED_BYTES or total > MAX_RATIO * size:
        raise ArchiveError(
            f"refusing to extract {archive}: its members must expand to at most "
            f"MAX_EXTRACTED_BYTES = {MAX_EXTRACTED_BYTES} bytes and MAX_RATIO = {MAX_RATIO} "
            f"times the archive's {size} bytes; got {total} bytes. If you trust it, raise "
            "d2lcore.datasets.MAX_EXTRACTED_BYTES or MAX_RATIO"
        )


def _extract_zip(archive, root):
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        members = []
        for info in infos:
            mode = info.external_attr >> 16
            special = stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR)
            members.append(
                (info.filename, info.is_dir(), not info.is_dir() and not special)
            )
        _check_members(archive, members, root)
        _check_size(archive, sum(info.file_size for info in infos))
        for info in infos:
            dest = root / info.filename
            if info.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(dest, "wb") as out:  # checks the CRC
                shutil.copyfileobj(src, out, _CHUNK)


def download_extract(name, cache_dir=None):
    """:func:`download` the registered archive ``name`` and extract it next to itself.

    ``x.zip`` is extracted into the folder ``x`` beside it;
    if all of the archive's members lie in a top folder ``x/``, that folder's contents
    become ``x``'s (so ``fra-eng.zip`` holding ``fra-eng/fra.txt`` gives ``fra-eng/fra.txt``).
    Members with absolute paths, ``..`` components, links or special files are refused
    before anything is written, and so is an archive that would expand to more than
    MAX_EXTRACTED_BYTES, or more than MAX_RATIO times its size. Extraction goes to a
    temporary folder that is renamed into place when complete; an existing folder is reused
    when its marker names the same archive and every extracted file is there with its
    size (else it is extracted again).
    Raises :class:`ArchiveError` for a bad archive (nothing is left behind). Returns the
    folder's :class:`pathlib.Path`.
    """
    _, algorithm, digest, filename = _registered(name)
    stem, _ = _archive_stem(filename)
    archive = download(name, cache_dir)
    target = archive.parent / stem
    stamp = f"{algorithm}:{digest}"
    _remove_stale(archive.parent, stem)
    if _is_extracted(target, stamp):
        return target
    tmp = Path(tempfile.mkdtemp(dir=archive.parent, prefix=f".{stem}.", suffix=".part"))
    try:
        root = tmp.resolve()
        try:
            _extract_zip(archive, root)
        except ArchiveError:
            raise
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            ValueError,
        ) as e:
            raise ArchiveError(
                f"cannot extract {archive}: {type(e).__name__}: {e}"
            ) from e
        entries = list(root.iterdir())
        if len(entries) == 1 and entries[0].name == stem and entries[0].is_dir():
            root = entries[0]
        files = {
            p.relative_to(root).as_posix(): p.stat().st_size
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }
        marker = {"archive": stamp, "files": files}
        (root / _MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        _move_into_place(root, target, stamp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _is_extracted(folder, stamp):
    """Whether ``folder`` holds a complete extraction of the archive ``stamp``: its marker
    names that archive, and every file it lists is there with its size."""
    try:
        marker = json.loads((folder / _MARKER).read_text(encoding="utf-8"))
        files = marker["files"]
        return marker["archive"] == stamp and all(
            (folder / name).is_file() and (folder / name).stat().st_size == size
            for name, size in files.items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _move_into_place(root, target, stamp):
    """Rename the complete folder ``root`` to ``target``, replacing a stale ``target``."""
    old = None
    if target.exists():  # an earlier, incomplete or outdated extraction: set it aside
        old = Path(
            tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old")
        )
        os.replace(target, old / target.name)
    try:
        os.rename(root, target)
    except OSError:
        if not _is_extracted(target, stamp):  # not another process that finished first
            raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _read_sums(sums_file):
    """``{file name: sha256}`` from a file in ``sha256sum``'s format."""
    sums = {}
    for number, line in enumerate(sums_file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, sep, name = line[:64].lower(), line[64:66], line[66:].strip()
        if sep not in ("  ", " *") or not name or len(digest.strip("0123456789abcdef")):
            raise ChecksumError(
                f"{sums_file}, line {number}: expected '<64 hex digits>  <file name>' "
                f"(the format of `sha256sum`); got {line!r}"
            )
        sums[PurePosixPath(name).name] = digest
    return sums


def _read_text(path):
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e})") from e


def read_data_nmt(split="train", path=None):
    """The text of an English–French corpus: lines ``English<TAB>French``.

    ``split="train"`` or ``"heldout"``: the project's own corpus, ``data_dir()/fra-eng/``
    ``fra.txt`` or ``heldout.txt``, checked against the SHA-256 listed in
    ``data_dir()/fra-eng/SHA256SUMS`` (:class:`ChecksumError` if it differs). ``path``: read
    that UTF-8 file instead, unchecked (e.g. ``download_extract("fra-eng") / "fra.txt"``,
    the full Tatoeba corpus). Returns the text as one str.
    """
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {sorted(_SPLITS)}; got {split!r}")
    if path is not None:
        if split != "train":
            raise ValueError("give either split or path, not both")
        path = Path(path)
        if not path.is_file():
            hint = ""
            if path.name == "fra.txt":
                hint = (
                    ". For the full Tatoeba corpus, run d2l.download_extract('fra-eng') "
                    "and pass the fra.txt in the folder it returns"
                )
            what = "is a folder, not a file" if path.is_dir() else "does not exist"
            raise FileNotFoundError(f"{path} {what}{hint}")
        return _read_text(path)
    folder = data_dir() / "fra-eng"
    file, sums_file = folder / _SPLITS[split], folder / "SHA256SUMS"
    for needed in (file, sums_file):
        if not needed.is_file():
            where = (
                f"D2L_DATA_DIR is {os.environ['D2L_DATA_DIR']!r}; unset it or copy fra-eng/ there"
                if os.environ.get("D2L_DATA_DIR")
                else "reinstall d2lcore (pip install --force-reinstall d2lcore), or in a clone "
                "of the repository restore it with `git checkout data/fra-eng`"
            )
            raise FileNotFoundError(
                f"{needed} is missing. The English–French corpus ships with the repository: "
                f"{where}."
            )
    expected = _read_sums(sums_file).get(file.name)
    if expected is None:
        raise ChecksumError(f"{sums_file} lists no SHA-256 for {file.name}")
    actual = _hash_file(file, "sha256")
    if actual != expected:
        raise ChecksumError(
            f"{file} has been changed: its SHA-256 is {actual}, expected {expected} "
            f"(from {sums_file}). Reinstall d2lcore, or in a clone of the repository restore it "
            "with `git checkout data/fra-eng`."
        )
    return _read_text(file)
