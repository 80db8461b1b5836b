"""Data files: the data folder, checked reading of the project's corpus, and verified, atomic downloads with
safe extraction, against a local HTTP server (no network)."""

import hashlib
import http.server
import io
import os
import socket
import stat
import threading
import time
import zipfile
from pathlib import Path

import pytest

import d2lcore
from d2lcore import datasets
from d2lcore.datasets import (
    ArchiveError,
    ChecksumError,
    DownloadError,
    data_dir,
    download,
    download_dir,
    download_extract,
    read_data_nmt,
)

FRA = "Go.\tVa !\nRun!\tCours\u202f!\n"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def make_zip(members):
    """A zip archive (bytes) of ``members``: name -> bytes, or zipfile.ZipInfo -> bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


GOOD_ZIP = make_zip({"fra-eng/fra.txt": FRA.encode()})


class Server:
    """A local HTTP server: ``routes[path] = (body, declared length or None)``; counts requests per path."""

    def __init__(self):
        self.routes, self.requests, self.trickle = {}, [], {}
        self.stop = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                if self.path not in server.routes:
                    self.send_error(404)
                    return
                body, length = server.routes[self.path]
                self.send_response(200)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                if self.path in server.trickle:  # one byte at a time, each within TIMEOUT
                    for byte in body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        if server.stop.wait(server.trickle[self.path]):
                            break
                else:
                    self.wfile.write(body)
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        serve = lambda: self.httpd.serve_forever(poll_interval=0.02)  # noqa: E731
        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def serve(self, monkeypatch, name, path, body, digest=None, length=None):
        """Serve ``body`` at ``path`` and register it in DATA_HUB as ``name`` with sha256 ``digest``."""
        self.routes[path] = (body, length)
        digest = sha256(body) if digest is None else digest
        monkeypatch.setitem(datasets.DATA_HUB, name, (self.url(path), f"sha256:{digest}"))

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "work" / "cache"


def names(folder):
    """Every file and folder below ``folder``, hidden ones included, as sorted relative paths."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


# --- the data folder -----------------------------------------------------------------------------------------


def test_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("D2L_DATA_DIR", raising=False)
    assert data_dir() == Path(d2lcore.__file__).resolve().parents[1] / "data"
    monkeypatch.setenv("D2L_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path


def test_download_dir(monkeypatch, tmp_path):
    """Downloads never go into the installed package: the user's cache, or D2L_DATA_DIR/downloads."""
    monkeypatch.delenv("D2L_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert download_dir() == tmp_path / "cache" / "d2lcore"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert download_dir() == tmp_path / "home" / ".cache" / "d2lcore"
    monkeypatch.setenv("D2L_DATA_DIR", str(tmp_path / "data"))
    assert download_dir() == tmp_path / "data" / "downloads"


# --- download ------------------------------------------------------------------------------------------------


def test_download_and_cache(server, monkeypatch, cache):
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    path = download("fra-eng", cache)
    assert path == cache / "fra-eng.zip" and path.read_bytes() == GOOD_ZIP
    assert names(cache) == ["fra-eng.zip"]  # no temporary file left
    assert download("fra-eng", str(cache)) == path
    assert server.requests == ["/fra-eng.zip"]  # the second call used the cached copy


def test_download_default_folder(server, monkeypatch, tmp_path):
    monkeypatch.setenv("D2L_DATA_DIR", str(tmp_path))
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    assert download("fra-eng") == tmp_path / "downloads" / "fra-eng.zip"


def test_download_replaces_a_bad_cached_copy(server, monkeypatch, cache):
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    cache.mkdir(parents=True)
    (cache / "fra-eng.zip").write_bytes(b"stale")
    assert download("fra-eng", cache).read_bytes() == GOOD_ZIP
    assert server.requests == ["/fra-eng.zip"]


def test_download_sha1_entry(server, monkeypatch, cache):
    server.routes["/old.zip"] = (GOOD_ZIP, None)
    entry = (server.url("/old.zip"), "sha1:" + hashlib.sha1(GOOD_ZIP).hexdigest())
    monkeypatch.setitem(datasets.DATA_HUB, "old", entry)
    assert download("old", cache).read_bytes() == GOOD_ZIP


def test_download_corrupt(server, monkeypatch, cache):
    corrupt = bytearray(GOOD_ZIP)
    corrupt[40] ^= 0xFF  # same size, one byte altered
    server.serve(monkeypatch, "corrupt", "/corrupt.zip", bytes(corrupt), digest=sha256(GOOD_ZIP))
    with pytest.raises(ChecksumError) as e:
        download("corrupt", cache)
    message = str(e.value)
    assert server.url("/corrupt.zip") in message
    assert f"expected {sha256(GOOD_ZIP)}, got {sha256(bytes(corrupt))}" in message
    assert names(cache) == []


def test_download_truncated(server, monkeypatch, cache):
    # the server promises more bytes than it sends, then closes the connection
    server.serve(monkeypatch, "short", "/short.zip", GOOD_ZIP, length=len(GOOD_ZIP) + 100)
    with pytest.raises(
        DownloadError, match=f"got {len(GOOD_ZIP)} of {len(GOOD_ZIP) + 100} bytes"
    ) as e:
        download("short", cache)
    assert server.url("/short.zip") in str(e.value) and "by hand" in str(e.value)
    assert names(cache) == []


def test_download_http_error(server, monkeypatch, cache):
    monkeypatch.setitem(datasets.DATA_HUB, "gone", (server.url("/gone.zip"), "sha256:" + "0" * 64))
    with pytest.raises(DownloadError, match="HTTP 404"):
        download("gone", cache)
    assert names(cache) == []


def test_download_unreachable(monkeypatch, cache):
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/fra-eng.zip"
    monkeypatch.setitem(datasets.DATA_HUB, "fra-eng", (url, "sha256:" + sha256(GOOD_ZIP)))
    with pytest.raises(DownloadError) as e:
        download("fra-eng", cache)
    message = str(e.value)
    assert f"could not download {url}" in message
    assert f"save it as {cache / 'fra-eng.zip'}" in message and sha256(GOOD_ZIP) in message
    assert names(cache) == []


def test_download_bad_registry(monkeypatch, cache):
    with pytest.raises(
        ValueError, match=r"no data set named 'nope' is registered; DATA_HUB has: \[.*'fra-eng'"
    ):
        download("nope", cache)
    monkeypatch.setitem(datasets.DATA_HUB, "md5", ("http://127.0.0.1/x.zip", "md5:" + "0" * 32))
    with pytest.raises(ValueError, match="sha256:<64 hex digits>"):
        download("md5", cache)
    monkeypatch.setitem(datasets.DATA_HUB, "ftp", ("ftp://127.0.0.1/x.zip", "sha256:" + "0" * 64))
    with pytest.raises(ValueError, match="http"):
        download("ftp", cache)


def test_registered_fra_eng():
    url, digest = datasets.DATA_HUB["fra-eng"]
    assert url == "https://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip"
    assert digest == "sha1:94646ad1522d915e7b0f9296181140edcf86a4f5"


def test_download_deadline(server, monkeypatch, cache):
    """A server that trickles one byte every 0.2 s never hits TIMEOUT, but the whole download has DEADLINE."""
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    server.trickle["/fra-eng.zip"] = 0.2
    monkeypatch.setattr(datasets, "DEADLINE", 1)
    with pytest.raises(
        DownloadError, match=r"took longer than DEADLINE = 1 s \(got \d+ bytes so far\)"
    ):
        download("fra-eng", cache)
    assert names(cache) == []  # nothing left behind


def test_download_removes_stale_parts(server, monkeypatch, cache):
    """A killed download or extraction leaves a .part file or folder: the next call removes it once it is
    older than DEADLINE (a younger one may belong to a download running in another process)."""
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    cache.mkdir(parents=True)
    stale = [
        cache / ".fra-eng.zip.abc123.part",
        cache / ".fra-eng.def456.part",
        cache / ".fra-eng.x1.old",
    ]
    stale[0].write_bytes(b"half a download")
    for folder in stale[1:]:
        (folder / "fra-eng").mkdir(parents=True)
        (folder / "fra-eng" / "fra.txt").write_text("half")
    fresh = cache / ".fra-eng.zip.running.part"
    fresh.write_bytes(b"another process")
    old = time.time() - datasets.DEADLINE - 60
    for path in stale:
        os.utime(path, (old, old))
    download_extract("fra-eng", cache)
    assert not any(path.exists() for path in stale)
    assert fresh.exists()
    assert names(cache) == [
        ".fra-eng.zip.running.part",
        "fra-eng",
        "fra-eng.zip",
        "fra-eng/.d2lcore-extracted",
        "fra-eng/fra.txt",
    ]


def test_download_refuses_a_folder_at_the_target(server, monkeypatch, cache):
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    (cache / "fra-eng.zip").mkdir(parents=True)
    with pytest.raises(
        DownloadError,
        match=r"fra-eng\.zip is a folder, where download\('fra-eng'\) must save a file",
    ):
        download("fra-eng", cache)
    assert server.requests == []


# --- download_extract ----------------------------------------------------------------------------------------


def test_download_extract(server, monkeypatch, cache):
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    folder = download_extract("fra-eng", cache)
    assert folder == cache / "fra-eng"
    assert (folder / "fra.txt").read_text(
        encoding="utf-8"
    ) == FRA  # the top folder fra-eng/ is not doubled
    assert read_data_nmt(path=folder / "fra.txt") == FRA
    assert names(cache) == [
        "fra-eng",
        "fra-eng.zip",
        "fra-eng/.d2lcore-extracted",
        "fra-eng/fra.txt",
    ]
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    assert download_extract("fra-eng", cache) == folder  # reused: not extracted again
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert server.requests == ["/fra-eng.zip"]


@pytest.mark.parametrize("damage", ["truncate", "delete", "old marker"])
def test_download_extract_checks_more_than_the_marker(server, monkeypatch, cache, damage):
    """A folder is reused only if every file the marker lists is there with its size; else extracted again."""
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    folder = download_extract("fra-eng", cache)
    if damage == "truncate":
        (folder / "fra.txt").write_text("Go.", encoding="utf-8")
    elif damage == "delete":
        (folder / "fra.txt").unlink()
    else:  # the marker of an earlier version: the archive's hash only
        (folder / ".d2lcore-extracted").write_text(datasets.DATA_HUB["fra-eng"][1] + "\n")
    assert download_extract("fra-eng", cache) == folder
    assert (folder / "fra.txt").read_text(encoding="utf-8") == FRA
    assert server.requests == ["/fra-eng.zip"]  # the archive itself was reused


@pytest.mark.parametrize("limit", ["size", "ratio"])
def test_download_extract_size_and_ratio_caps(server, monkeypatch, cache, limit):
    """A zip bomb: 4 MiB of zeros in a few KiB. Refused before anything is written."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("fra-eng/zeros.bin", bytes(4 << 20))
    bomb = buffer.getvalue()
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", bomb)
    if limit == "size":
        monkeypatch.setattr(datasets, "MAX_EXTRACTED_BYTES", 1 << 20)
        monkeypatch.setattr(datasets, "MAX_RATIO", 10**6)
    with pytest.raises(ArchiveError, match=r"must expand to at most .*; got 4194304 bytes"):
        download_extract("fra-eng", cache)
    assert names(cache) == ["fra-eng.zip"]


def test_download_extract_replaces_an_incomplete_folder(server, monkeypatch, cache):
    server.serve(monkeypatch, "fra-eng", "/fra-eng.zip", GOOD_ZIP)
    (cache / "fra-eng").mkdir(parents=True)
    (cache / "fra-eng" / "leftover.txt").write_text("x")
    folder = download_extract("fra-eng", cache)
    assert names(folder) == [".d2lcore-extracted", "fra.txt"]
    assert names(cache) == [
        "fra-eng",
        "fra-eng.zip",
        "fra-eng/.d2lcore-extracted",
        "fra-eng/fra.txt",
    ]


def test_download_extract_archive_without_top_folder(server, monkeypatch, cache):
    server.serve(
        monkeypatch, "pairs", "/pairs.zip", make_zip({"fra.txt": b"a\tb\n", "sub/x.txt": b"x"})
    )
    folder = download_extract("pairs", cache)
    assert names(folder) == [".d2lcore-extracted", "fra.txt", "sub", "sub/x.txt"]
    assert (folder / "sub" / "x.txt").read_bytes() == b"x"


def test_download_extract_refuses_a_tar_archive(server, monkeypatch, cache):
    """Only zip archives are registered, so only zip archives are extracted: a .tar.gz is
    refused before it is downloaded."""
    server.serve(monkeypatch, "fra-eng", "/fra-eng.tar.gz", b"not downloaded")
    with pytest.raises(ArchiveError, match="fra-eng.tar.gz: not a .zip archive"):
        download_extract("fra-eng", cache)
    assert names(cache) == []


def symlink_info(name):
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize(
    "archive, why",
    [
        ("evil.zip", "has a '..' component"),
        ("abs.zip", "has an absolute path"),
        ("link.zip", "is a link"),
    ],
)
def test_download_extract_refuses_unsafe_members(
    server, monkeypatch, cache, tmp_path, archive, why
):
    outside = tmp_path / "outside.txt"
    bad = {
        "evil.zip": lambda: make_zip({"evil/ok.txt": b"ok", "../outside.txt": b"evil"}),
        "abs.zip": lambda: make_zip({"abs/ok.txt": b"ok", str(outside): b"evil"}),
        "link.zip": lambda: make_zip(
            {"link/ok.txt": b"ok", symlink_info("link/passwd"): b"/etc/passwd"}
        ),
    }[archive]()
    name = archive.split(".")[0]
    server.serve(monkeypatch, name, "/" + archive, bad)
    with pytest.raises(ArchiveError, match=f"refusing to extract .*{archive}: member .* {why}"):
        download_extract(name, cache)
    assert names(cache) == [archive]  # the verified archive stays; nothing was extracted
    assert names(tmp_path) == [
        "work",
        "work/cache",
        f"work/cache/{archive}",
    ]  # nothing written outside


def test_download_extract_not_an_archive(server, monkeypatch, cache):
    server.serve(monkeypatch, "junk", "/junk.zip", b"this is not a zip file")
    with pytest.raises(ArchiveError, match="cannot extract .*junk.zip: BadZipFile"):
        download_extract("junk", cache)
    assert names(cache) == ["junk.zip"]
    server.serve(monkeypatch, "data", "/data.csv", b"a,b\n")
    with pytest.raises(ArchiveError, match="not a .zip archive"):
        download_extract("data", cache)
    assert names(cache) == ["junk.zip"]  # refused before downloading


# --- read_data_nmt -------------------------------------------------------------------------------------------


@pytest.fixture
def corpus(monkeypatch, tmp_path):
    """A project corpus in a temporary D2L_DATA_DIR: fra-eng/fra.txt, heldout.txt and SHA256SUMS."""
    folder = tmp_path / "fra-eng"
    folder.mkdir()
    files = {"fra.txt": FRA.encode(), "heldout.txt": b"Hi.\tSalut !\n"}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    sums = f"{sha256(files['fra.txt'])}  fra.txt\n{sha256(files['heldout.txt'])} *heldout.txt\n"
    (folder / "SHA256SUMS").write_text(sums, encoding="utf-8")
    monkeypatch.setenv("D2L_DATA_DIR", str(tmp_path))
    return folder


def test_read_data_nmt_splits(corpus):
    assert read_data_nmt() == FRA
    assert read_data_nmt("train") == FRA
    assert read_data_nmt(split="heldout") == "Hi.\tSalut !\n"


def test_read_data_nmt_detects_changes(corpus):
    expected = sha256(FRA.encode())
    (corpus / "fra.txt").write_text(FRA + "Hi.\tSalut !\n", encoding="utf-8")
    actual = sha256((corpus / "fra.txt").read_bytes())
    with pytest.raises(ChecksumError) as e:
        read_data_nmt()
    message = str(e.value)
    assert str(corpus / "fra.txt") in message and f"{actual}, expected {expected}" in message
    assert read_data_nmt("heldout") == "Hi.\tSalut !\n"  # the other file is still fine


def test_read_data_nmt_bad_sums(corpus):
    (corpus / "SHA256SUMS").write_text(f"{sha256(b'')}  other.txt\n", encoding="utf-8")
    with pytest.raises(ChecksumError, match="lists no SHA-256 for fra.txt"):
        read_data_nmt()
    (corpus / "SHA256SUMS").write_text("abc fra.txt\n", encoding="utf-8")
    with pytest.raises(ChecksumError, match="line 1: expected '<64 hex digits>  <file name>'"):
        read_data_nmt()


def test_read_data_nmt_missing(corpus, monkeypatch, tmp_path):
    (corpus / "heldout.txt").unlink()
    with pytest.raises(FileNotFoundError, match="heldout.txt is missing.*D2L_DATA_DIR is"):
        read_data_nmt("heldout")
    monkeypatch.delenv("D2L_DATA_DIR")
    monkeypatch.setattr(datasets, "data_dir", lambda: tmp_path)
    with pytest.raises(
        FileNotFoundError, match="heldout.txt is missing.*`git checkout data/fra-eng`"
    ):
        read_data_nmt("heldout")
    (corpus / "SHA256SUMS").unlink()
    with pytest.raises(FileNotFoundError, match="SHA256SUMS is missing"):
        read_data_nmt("train")


def test_read_data_nmt_path(tmp_path):
    file = tmp_path / "pairs.txt"
    file.write_bytes(FRA.encode())
    assert read_data_nmt(path=file) == FRA and read_data_nmt(path=str(file)) == FRA
    with pytest.raises(
        FileNotFoundError, match=r"fra.txt does not exist.*download_extract\('fra-eng'\)"
    ):
        read_data_nmt(path=tmp_path / "fra.txt")
    with pytest.raises(FileNotFoundError, match="is a folder"):
        read_data_nmt(path=tmp_path)
    (tmp_path / "latin1.txt").write_bytes("Ça\tva\n".encode("latin-1"))
    with pytest.raises(ValueError, match="is not UTF-8"):
        read_data_nmt(path=tmp_path / "latin1.txt")


def test_read_data_nmt_arguments(tmp_path):
    with pytest.raises(
        ValueError, match=r"split must be one of \['heldout', 'train'\]; got 'test'"
    ):
        read_data_nmt("test")
    with pytest.raises(ValueError, match="either split or path"):
        read_data_nmt("heldout", path=tmp_path / "fra.txt")


REPO_SUMS = Path(__file__).resolve().parents[1] / "data" / "fra-eng" / "SHA256SUMS"


@pytest.mark.skipif(
    not REPO_SUMS.is_file(), reason="the project's corpus data/fra-eng is not there yet"
)
def test_project_corpus(monkeypatch):
    from d2lcore.text import preprocess_nmt, tokenize_nmt

    monkeypatch.delenv("D2L_DATA_DIR", raising=False)
    source, target = tokenize_nmt(preprocess_nmt(read_data_nmt("train")), num_examples=600)
    assert len(source) == len(target) == 600
    assert tokenize_nmt(preprocess_nmt(read_data_nmt("heldout")))[0]
