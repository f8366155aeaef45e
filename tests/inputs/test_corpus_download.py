"""Downloading the pinned Gutenberg books (pytest_niah.inputs.gutenberg) and load_corpus.

Downloads are tested against a real HTTP server on loopback that serves the pinned books
(the packaged ones, exported to a folder) under the pinned raw.githubusercontent.com layout.
"""

from __future__ import annotations

import hashlib
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_niah.inputs.corpus import CorpusError, load_corpus, load_folder
from pytest_niah.inputs.gutenberg import (
    DEFAULT_BASE_URL,
    default_cache_dir,
    download_gutenberg,
    gutenberg_books,
    gutenberg_corpus,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY_CORPUS = REPO_ROOT / "fixtures" / "corpus" / "tiny"
# The pinned books as a folder come from the repo conftest's `shared_corpus_dir` fixture
# (the packaged books, exported once per session).


# --------------------------------------------------------------------------- loopback server


class BookServer(http.server.ThreadingHTTPServer):
    """Serves the pinned books at /<repository>/<commit>/<path>, with per-book faults."""

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), BookHandler)
        self.root = root
        self.routes = {f"/{b.repository}/{b.commit}/{b.path}": b for b in gutenberg_books()}
        self.faults: dict[
            str, str
        ] = {}  # book file -> "missing" | "altered" | "truncated" | "stall"
        self.requests: list[str] = []
        self.release = threading.Event()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def record(self, path: str) -> None:
        with self._lock:
            self.requests.append(path)

    def requested_files(self) -> list[str]:
        with self._lock:
            return [self.routes[p].file if p in self.routes else p for p in self.requests]


class BookHandler(http.server.BaseHTTPRequestHandler):
    server: BookServer

    def do_GET(self) -> None:
        self.server.record(self.path)
        book = self.server.routes.get(self.path)
        fault = self.server.faults.get(book.file) if book else None
        if book is None or fault == "missing":
            self.send_error(404, "Not Found")
            return
        if fault == "stall":
            self.server.release.wait(timeout=10)
        data = (self.server.root / book.file).read_bytes()
        if fault == "altered":
            data = data[:-1] + bytes([data[-1] ^ 0x01])  # same size, different hash
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if fault == "truncated":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def book_server(monkeypatch: pytest.MonkeyPatch, shared_corpus_dir: Path) -> Iterator[BookServer]:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = BookServer(shared_corpus_dir)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


FIRST = "pride_and_prejudice.txt"  # first pinned book: a fault there stops the run early


# --------------------------------------------------------------------------- pinned list


def test_pinned_url_layout() -> None:
    book = gutenberg_books()[0]
    assert book.url() == f"{DEFAULT_BASE_URL}/{book.repository}/{book.commit}/{book.path}"
    assert book.url("http://mirror.example/") == (
        f"http://mirror.example/{book.repository}/{book.commit}/{book.path}"
    )
    assert all(len(b.commit) == 40 and len(b.sha256) == 64 for b in gutenberg_books())


# --------------------------------------------------------------------------- downloads


def test_download_verifies_and_caches(book_server: BookServer, tmp_path: Path) -> None:
    folder = download_gutenberg(tmp_path, book_server.base_url, timeout=10)

    assert folder == tmp_path / "gutenberg"
    for book in gutenberg_books():
        assert sha256_file(folder / book.file) == book.sha256
        assert (folder / book.file).stat().st_size == book.bytes
        assert (folder / book.file).stat().st_mode & 0o777 == 0o644
    assert sorted(book_server.requested_files()) == sorted(b.file for b in gutenberg_books())
    assert leftovers(folder) == []

    download_gutenberg(tmp_path, book_server.base_url, timeout=10)
    assert len(book_server.requests) == 10  # second call downloads nothing


def test_download_404_names_url(book_server: BookServer, tmp_path: Path) -> None:
    book_server.faults[FIRST] = "missing"
    url = gutenberg_books()[0].url(book_server.base_url)

    with pytest.raises(CorpusError, match="HTTP 404") as info:
        download_gutenberg(tmp_path, book_server.base_url, timeout=10)

    assert url in str(info.value)
    assert "--niah-corpus" in str(info.value)
    assert not (tmp_path / "gutenberg" / FIRST).exists()
    assert leftovers(tmp_path / "gutenberg") == []


def test_checksum_mismatch_discards_file(book_server: BookServer, tmp_path: Path) -> None:
    book_server.faults[FIRST] = "altered"
    book = gutenberg_books()[0]
    data = (book_server.root / FIRST).read_bytes()
    altered_sha = hashlib.sha256(data[:-1] + bytes([data[-1] ^ 0x01])).hexdigest()

    with pytest.raises(CorpusError, match="Checksum mismatch") as info:
        download_gutenberg(tmp_path, book_server.base_url, timeout=10)

    message = str(info.value)
    assert book.url(book_server.base_url) in message
    assert book.sha256 in message
    assert altered_sha in message
    assert not (tmp_path / "gutenberg" / FIRST).exists()
    assert leftovers(tmp_path / "gutenberg") == []


def test_connection_dropped_mid_body(book_server: BookServer, tmp_path: Path) -> None:
    book_server.faults[FIRST] = "truncated"
    size = gutenberg_books()[0].bytes

    with pytest.raises(CorpusError, match=f"closed after {size // 2} of {size} bytes") as info:
        download_gutenberg(tmp_path, book_server.base_url, timeout=10)

    assert gutenberg_books()[0].url(book_server.base_url) in str(info.value)
    assert not (tmp_path / "gutenberg" / FIRST).exists()
    assert leftovers(tmp_path / "gutenberg") == []


def test_read_timeout(book_server: BookServer, tmp_path: Path) -> None:
    book_server.faults[FIRST] = "stall"

    with pytest.raises(CorpusError, match="timed out") as info:
        download_gutenberg(tmp_path, book_server.base_url, timeout=0.3)

    assert gutenberg_books()[0].url(book_server.base_url) in str(info.value)
    assert not (tmp_path / "gutenberg" / FIRST).exists()


def test_unreachable_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}"

    with pytest.raises(CorpusError, match="network connection") as info:
        download_gutenberg(tmp_path, base_url, timeout=5)

    assert gutenberg_books()[0].url(base_url) in str(info.value)


def test_bad_base_url(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not-a-url"):
        download_gutenberg(tmp_path, "not-a-url", timeout=5)


def test_corrupted_cache_is_redownloaded(book_server: BookServer, tmp_path: Path) -> None:
    folder = download_gutenberg(tmp_path, book_server.base_url, timeout=10)
    flipped = folder / "moby_dick.txt"
    data = bytearray(flipped.read_bytes())
    data[1000] ^= 0x20  # same size, wrong hash
    flipped.write_bytes(bytes(data))
    (folder / "walden.txt").write_bytes(b"truncated")
    (folder / "dracula.txt").unlink()
    book_server.requests.clear()

    download_gutenberg(tmp_path, book_server.base_url, timeout=10)

    assert sorted(book_server.requested_files()) == ["dracula.txt", "moby_dick.txt", "walden.txt"]
    for book in gutenberg_books():
        assert sha256_file(folder / book.file) == book.sha256


def test_stale_partial_files_are_removed(book_server: BookServer, tmp_path: Path) -> None:
    folder = tmp_path / "gutenberg"
    folder.mkdir()
    (folder / ".moby_dick.txt.abc123.part").write_bytes(b"half a whale")

    download_gutenberg(tmp_path, book_server.base_url, timeout=10)

    assert leftovers(folder) == []


def test_concurrent_callers_download_once(book_server: BookServer, tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            download_gutenberg(tmp_path, book_server.base_url, timeout=10)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert len(book_server.requests) == 10


def test_gutenberg_corpus_and_load_corpus(
    book_server: BookServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloaded = gutenberg_corpus(tmp_path, book_server.base_url)
    assert downloaded.name == "gutenberg"
    assert [b.name for b in downloaded.books] == sorted(b.file[:-4] for b in gutenberg_books())
    assert downloaded.fingerprint() == load_folder(book_server.root).fingerprint()

    monkeypatch.setenv("NIAH_GUTENBERG_URL", book_server.base_url)
    via_env = load_corpus("gutenberg", cache_dir=tmp_path)
    assert via_env.fingerprint() == downloaded.fingerprint()
    assert len(book_server.requests) == 10  # the second load hit the cache


def test_load_corpus_base_url_argument_wins(
    book_server: BookServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NIAH_GUTENBERG_URL", "http://127.0.0.1:9/nowhere")
    loaded = load_corpus("gutenberg", cache_dir=tmp_path, base_url=book_server.base_url)
    assert loaded.name == "gutenberg"
    assert len(loaded.books) == 10


def test_load_corpus_folder_spec() -> None:
    assert load_corpus(TINY_CORPUS).name == str(TINY_CORPUS)
    assert load_corpus(str(TINY_CORPUS)).books == load_folder(TINY_CORPUS).books


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "corpus"

    import platformdirs

    monkeypatch.delenv("NIAH_CACHE_DIR")
    assert default_cache_dir() == Path(platformdirs.user_cache_dir("pytest-niah")) / "corpus"
