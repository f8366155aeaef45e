"""Bad downloads of the pinned books: one message naming the URL and the fix, nothing kept.

A real HTTP server on 127.0.0.1 (a thread of this test, shut down at teardown) plays
raw.githubusercontent.com through NIAH_GUTENBERG_URL. It serves the shared books -- or
wrong bytes, half a body, a reset connection, a 404 -- and every failure must stop the run
once, before any test (exit code 4), with a message naming the book's URL and the fix,
leaving no partial file in the cache.
"""

from __future__ import annotations

import http.server
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_niah.errors import CorpusError
from pytest_niah.inputs.corpus import load_corpus
from pytest_niah.inputs.gutenberg import gutenberg_books

DOWNLOAD_FIX = "point --niah-corpus at that local folder"
LEXICAL = "lexical-tfidf"  # the label of --niah-model=lexical:tfidf


class BookServer(http.server.ThreadingHTTPServer):
    """Serves the pinned books at /<repository>/<commit>/<path>, all with the same fault."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), BookHandler)
        self.root = root
        self.routes = {f"/{b.repository}/{b.commit}/{b.path}": b for b in gutenberg_books()}
        self.fault = "none"
        self.requests: list[str] = []
        self.errors: list[BaseException] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        self.errors.append(sys.exc_info()[1])  # a reset connection is expected, not printed


class BookHandler(http.server.BaseHTTPRequestHandler):
    server: BookServer
    timeout = 30  # a stuck client never holds a server thread for long

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        book = self.server.routes.get(self.path)
        fault = self.server.fault
        if book is None or fault == "missing":
            self.send_error(404, "Not Found")
            return
        data = (self.server.root / book.file).read_bytes()
        if fault == "flipped":
            data = data[:-1] + bytes([data[-1] ^ 0x01])  # same size, other sha256
        elif fault == "garbage":
            data = b"<html>rate limited</html>\n" * 10
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if fault in ("truncated", "reset"):
            self.wfile.write(data[: len(data) // 3])
            self.wfile.flush()
            if fault == "reset":  # RST instead of FIN: the client sees a connection error
                linger = struct.pack("ii", 1, 0)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.close_connection = True
            self.connection.close()
            return
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server(monkeypatch, shared_corpus_dir: Path) -> Iterator[BookServer]:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    books = BookServer(shared_corpus_dir)
    thread = threading.Thread(target=books.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    monkeypatch.setenv("NIAH_GUTENBERG_URL", books.url)
    try:
        yield books
    finally:
        books.shutdown()
        books.server_close()
        thread.join(timeout=10)
        assert not thread.is_alive()


def first_url(server: BookServer) -> str:
    book = gutenberg_books()[0]
    return f"{server.url}/{book.repository}/{book.commit}/{book.path}"


def book_folder(tmp_path: Path) -> Path:
    """Where the plugin keeps downloaded books (NIAH_CACHE_DIR is tmp_path/niah-cache)."""
    return tmp_path / "niah-cache" / "corpus" / "gutenberg"


def kept_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != ".lock") if folder.exists() else []


FAULTS = {
    "flipped": ["Checksum mismatch for", "the file was discarded", "serves the pinned commit"],
    "garbage": ["Checksum mismatch for", "(260 bytes)"],
    "truncated": ["failed: the connection closed after", "check the network connection"],
    "reset": ["failed:", "check the network connection"],
    "missing": ["failed: HTTP 404", "check the network connection"],
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_bad_download_stops_the_run_with_one_message(niah_run, server, tmp_path, fault):
    server.fault = fault
    result = niah_run.run("--niah-corpus=gutenberg")
    niah_run.assert_stopped(
        result,
        LEXICAL,
        first_url(server),
        *FAULTS[fault],
        "NIAH_GUTENBERG_URL",
        DOWNLOAD_FIX,
    )
    assert kept_files(book_folder(tmp_path)) == [], "a partial or wrong file was kept"
    assert len(server.requests) == 1, "the run tried the download more than once"


@pytest.mark.parametrize("fault", ["flipped", "reset"])
def test_bad_download_in_a_fresh_interpreter(niah_run, server, tmp_path, fault):
    server.fault = fault
    result = niah_run.run("--niah-corpus=gutenberg", subprocess=True)
    niah_run.assert_stopped(result, LEXICAL, first_url(server), DOWNLOAD_FIX)
    assert kept_files(book_folder(tmp_path)) == []


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_bad_download_through_the_api(server, tmp_path, fault):
    server.fault = fault
    with pytest.raises(CorpusError) as info:
        load_corpus("gutenberg", cache_dir=tmp_path, base_url=server.url)
    message = str(info.value)
    for fragment in [first_url(server), *FAULTS[fault], DOWNLOAD_FIX]:
        assert fragment in message
    assert kept_files(tmp_path / "gutenberg") == []


def test_unreachable_server(niah_run, monkeypatch, tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("NIAH_GUTENBERG_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    result = niah_run.run("--niah-corpus=gutenberg")
    niah_run.assert_stopped(
        result, LEXICAL, f"Downloading http://127.0.0.1:{port}/", "Connection refused", DOWNLOAD_FIX
    )


def test_the_run_passes_once_the_server_is_fixed(niah_run, server, tmp_path):
    """The control: the same server with the right bytes gives a passing run, and a
    half-finished earlier download does not stand in the way."""
    server.fault = "truncated"
    niah_run.assert_stopped(niah_run.run("--niah-corpus=gutenberg"), LEXICAL, first_url(server))
    server.fault = "none"
    result = niah_run.run("--niah-corpus=gutenberg")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert kept_files(book_folder(tmp_path)) == sorted(b.file for b in gutenberg_books())
    server.requests.clear()
    result = niah_run.run("--niah-corpus=gutenberg")
    assert result.ret == pytest.ExitCode.OK
    assert server.requests == [], "verified books were downloaded again"
