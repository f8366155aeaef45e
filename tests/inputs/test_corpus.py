"""Tests for pytest_niah.inputs.corpus: local folders, text cleaning, sentences, and downloads.

Downloads are tested against a real HTTP server on loopback that serves the pinned books
(the packaged ones, exported to a folder) under the pinned raw.githubusercontent.com layout.
The packaged books themselves are tested in test_packaged_corpus.py.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.inputs import corpus
from pytest_niah.inputs.corpus import Book, Corpus, CorpusError, load_corpus, load_folder, read_book
from pytest_niah.inputs.gutenberg import (
    DEFAULT_BASE_URL,
    default_cache_dir,
    download_gutenberg,
    gutenberg_books,
    gutenberg_corpus,
)
from pytest_niah.inputs.text import normalize_text, split_sentences, strip_gutenberg_boilerplate

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


# --------------------------------------------------------------------------- books folder


@pytest.fixture(scope="module")
def shared_corpus(shared_corpus_dir: Path) -> Corpus:
    return load_folder(shared_corpus_dir)


def test_shared_folder_books(shared_corpus: Corpus) -> None:
    pinned = {b.file[:-4]: b for b in gutenberg_books()}
    assert [b.name for b in shared_corpus.books] == sorted(pinned)
    for book in shared_corpus.books:
        assert book.sha256 == pinned[book.name].sha256
        assert len(book.text) >= 300_000, book.name
        assert "\r" not in book.text
        assert not book.text.startswith("\ufeff")
    assert shared_corpus.total_chars == sum(len(b.text) for b in shared_corpus.books)


@pytest.mark.parametrize("edge", ["head", "tail"])
def test_shared_boilerplate_stripped(shared_corpus: Corpus, edge: str) -> None:
    for book in shared_corpus.books:
        piece = book.text[:2000] if edge == "head" else book.text[-2000:]
        for marker in ("PROJECT GUTENBERG LICENSE", "*** START", "*** END", "***START", "***END"):
            assert marker not in piece.upper(), (book.name, marker)
        assert "end of the project gutenberg" not in piece.lower(), book.name
        assert "produced by" not in piece.lower()[:300], book.name


def test_shared_sentences_are_reasonable(shared_corpus: Corpus) -> None:
    for book in shared_corpus.books:
        sentences = book.sentences
        assert len(sentences) > 2000, book.name
        lengths = [len(s.split()) for s in sentences]
        typical = sum(3 <= n <= 80 for n in lengths) / len(lengths)
        assert typical > 0.85, (book.name, typical)
        assert all(s == s.strip() and "\n" not in s and "  " not in s for s in sentences)


def test_shared_folder_load_is_cached(shared_corpus: Corpus, shared_corpus_dir: Path) -> None:
    again = load_folder(shared_corpus_dir)
    assert again.books is shared_corpus.books  # served from the in-process cache


# --------------------------------------------------------------------------- local folders


def test_tiny_fixture_corpus() -> None:
    tiny = load_folder(TINY_CORPUS)
    assert [b.name for b in tiny.books] == ["harbour", "orchard"]
    harbour = tiny.books[0]
    assert harbour.text.startswith("THE HARBOUR")
    assert harbour.text.endswith("onto the table of the customs house.")
    assert "Mr. Abernethy stood on the quay" in " ".join(harbour.sentences)
    assert harbour.source == str((TINY_CORPUS / "harbour.txt").absolute())


def test_read_book_bom_crlf_and_markers(tmp_path: Path) -> None:
    raw = (
        "\ufeffHeader\r\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\r\n\r\n"
        "Body line one.\r\nBody line two.\rThree.\r\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK X ***\r\n"
    ).encode()
    path = tmp_path / "x_book.txt"
    path.write_bytes(raw)

    book = read_book(path)

    assert book == Book(
        name="x_book",
        text="Body line one.\nBody line two.\nThree.",
        source=str(path),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def test_non_utf8_file_names_path_and_offset(tmp_path: Path) -> None:
    (tmp_path / "cafe.txt").write_bytes(b"caf\xe9")
    with pytest.raises(CorpusError) as info:
        load_folder(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "cafe.txt") in message
    assert "offset 3" in message
    assert "UTF-8" in message


def test_non_utf8_offset_counts_the_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfab\xff")
    with pytest.raises(CorpusError, match="offset 5"):
        read_book(path)


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("not a book", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nested.txt").write_text("Nested.", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"no \.txt files") as info:
        load_folder(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(CorpusError, match="does not exist") as info:
        load_folder(missing)
    assert str(missing) in str(info.value)
    assert "--niah-corpus" in str(info.value)


@pytest.mark.parametrize("spec", ["gutenburg", "Gutenberg", "guttenberg", "gutenbrg/"])
def test_a_misspelt_gutenberg_suggests_gutenberg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for as_given in (spec, str(tmp_path / spec)):
        with pytest.raises(CorpusError) as info:
            load_corpus(as_given)
        assert info.value.hint.startswith("did you mean --niah-corpus=gutenberg?")
        message = str(info.value)
        assert "does not exist. Fix: did you mean --niah-corpus=gutenberg?" in message
        assert str(Path(as_given)) in message


def test_no_gutenberg_suggestion_for_other_names_or_existing_folders(tmp_path: Path) -> None:
    with pytest.raises(CorpusError) as info:
        load_corpus(str(tmp_path / "my-books"))
    assert "did you mean" not in str(info.value)
    (tmp_path / "gutenburg").mkdir()
    with pytest.raises(CorpusError, match=r"no \.txt files") as info:
        load_corpus(str(tmp_path / "gutenburg"))
    assert "did you mean" not in str(info.value)


def test_path_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "book.txt"
    file.write_text("A book.", encoding="utf-8")
    with pytest.raises(CorpusError, match="not a folder") as info:
        load_folder(file)
    assert str(file) in str(info.value)


def test_folder_of_empty_books(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("\n\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="no text") as info:
        load_folder(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_folder_selection_and_order(tmp_path: Path) -> None:
    for name in ("b.txt", "a.txt", "c.TXT", ".hidden.txt", "d.md", ".x.txt.part"):
        (tmp_path / name).write_text(f"Text of {name}.", encoding="utf-8")
    (tmp_path / "dir.txt").mkdir()

    loaded = load_folder(str(tmp_path))

    assert loaded.name == str(tmp_path)
    assert [b.name for b in loaded.books] == ["a", "b", "c"]


def test_symlinked_book_keeps_link_name(tmp_path: Path) -> None:
    (tmp_path / "books").mkdir()
    (tmp_path / "books" / "alias.txt").symlink_to(TINY_CORPUS / "orchard.txt")
    loaded = load_folder(tmp_path / "books")
    assert [b.name for b in loaded.books] == ["alias"]
    assert loaded.books[0].text == load_folder(TINY_CORPUS).books[1].text


def test_folder_cache_sees_changes(tmp_path: Path) -> None:
    book = tmp_path / "a.txt"
    book.write_text("First version.", encoding="utf-8")
    first = load_folder(tmp_path)
    assert load_folder(tmp_path).books is first.books

    book.write_text("Second version!", encoding="utf-8")
    os.utime(book, ns=(10**18, 10**18))
    second = load_folder(tmp_path)

    assert second.books[0].text == "Second version!"


def test_corpus_fingerprint_and_totals() -> None:
    a = Book(name="a", text="Alpha.", source="a.txt", sha256="1" * 64)
    b = Book(name="b", text="Beta beta.", source="b.txt", sha256="2" * 64)
    first = Corpus(name="x", books=(a, b))
    assert first.fingerprint() == Corpus(name="y", books=(b, a)).fingerprint()
    assert first.fingerprint() != Corpus(name="x", books=(a,)).fingerprint()
    changed = Book(name="b", text="Beta beta.", source="b.txt", sha256="3" * 64)
    assert first.fingerprint() != Corpus(name="x", books=(a, changed)).fingerprint()
    assert first.total_chars == 16


def test_book_sentences_are_cached_on_frozen_book() -> None:
    book = Book(name="a", text="One. Two.", source="a.txt", sha256="0" * 64)
    assert book.sentences == ("One.", "Two.")
    assert book.sentences is book.sentences
    with pytest.raises(AttributeError):
        book.text = "x"  # type: ignore[misc]


# --------------------------------------------------------------------------- text cleaning


def test_normalize_text() -> None:
    assert normalize_text("\ufeffa\r\nb\rc\nd") == "a\nb\nc\nd"
    assert normalize_text("a\r\r\nb") == "a\n\nb"
    assert normalize_text("x\ufeff") == "x\ufeff"


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (
            "*** START OF THIS PROJECT GUTENBERG EBOOK FOO ***",
            "*** END OF THIS PROJECT GUTENBERG EBOOK FOO ***",
        ),
        (
            "*** START OF THE PROJECT GUTENBERG EBOOK FOO ***",
            "*** END OF THE PROJECT GUTENBERG EBOOK FOO ***",
        ),
        (
            "***START OF THE PROJECT GUTENBERG EBOOK FOO***",
            "***END OF THE PROJECT GUTENBERG EBOOK FOO***",
        ),
        (
            "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*",
            "End of the Project Gutenberg Etext of Foo",
        ),
    ],
)
def test_strip_marker_variants(start: str, end: str) -> None:
    text = (
        f"Title: Foo\n\nSome licence text.\n{start}\n\n\n\nProduced by Someone\nand Others\n\n\n"
        f"FOO\n\nIt began.\n\nIt ended.\n\n\n\nEnd of Project Gutenberg’s Foo, by Bar\n\n{end}\n\n"
        "*** START: FULL LICENSE ***\nTHE FULL PROJECT GUTENBERG LICENSE\n"
    )
    assert strip_gutenberg_boilerplate(text) == "FOO\n\nIt began.\n\nIt ended."


def test_strip_small_print_at_end_is_not_a_start() -> None:
    text = (
        "*** START OF THE PROJECT GUTENBERG EBOOK FOO ***\nBody.\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK FOO ***\n"
        "***START**THE SMALL PRINT!**FOR PUBLIC DOMAIN EBOOKS**START***\nlegal\n"
        "*END THE SMALL PRINT! FOR PUBLIC DOMAIN EBOOKS*Ver.02/11/02*END*\n"
    )
    assert strip_gutenberg_boilerplate(text) == "Body."


def test_strip_without_markers_is_identity() -> None:
    text = "Produced by nobody.\n\nA plain text about the start of the project.\n"
    assert strip_gutenberg_boilerplate(text) == text
    assert strip_gutenberg_boilerplate("") == ""


def test_strip_keeps_only_start_when_no_end() -> None:
    text = "licence\n*** START OF THIS PROJECT GUTENBERG EBOOK FOO ***\nBody one.\nBody two.\n"
    assert strip_gutenberg_boilerplate(text) == "Body one.\nBody two."


# --------------------------------------------------------------------------- sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ("One.", "Two!", "Three?", "Four")),
        (
            "Mr. Darcy met Mrs. Bennet and Dr. Seward on St. James Street. They talked.",
            ("Mr. Darcy met Mrs. Bennet and Dr. Seward on St. James Street.", "They talked."),
        ),
        ("“Mr. Holmes,” said he. “Come in.”", ("“Mr. Holmes,” said he.", "“Come in.”")),
        ("He read H. G. Wells. Then he slept.", ("He read H. G. Wells.", "Then he slept.")),
        ("“Stop!” he cried. “Now!” She ran.", ("“Stop!” he cried.", "“Now!”", "She ran.")),
        ('He said "go." Then left.', ('He said "go."', "Then left.")),
        ("(It was late.) Nobody came.", ("(It was late.)", "Nobody came.")),
        ("See No. 5 above. No. It is not.", ("See No. 5 above.", "No.", "It is not.")),
        (
            "Chapter 1. It was 1815. 1816 was worse.",
            ("Chapter 1.", "It was 1815.", "1816 was worse."),
        ),
        ("He stopped. and went on. Slowly.", ("He stopped. and went on.", "Slowly.")),
        ("Said I. Then I left.", ("Said I.", "Then I left.")),
        ("e.g. this one. Etc.", ("e.g. this one.", "Etc.")),
        ("Wait... What? Fine.", ("Wait...", "What?", "Fine.")),
        ("Ünter den Linden. Élan vital.", ("Ünter den Linden.", "Élan vital.")),
        ("The end.\n\n* * * * *\n\n1. 2. 3.\n\nNext part", ("The end.", "Next part")),
        ("", ()),
        ("   \n\n  ", ()),
    ],
)
def test_split_sentences_examples(text: str, expected: tuple[str, ...]) -> None:
    assert split_sentences(text) == expected


def test_split_sentences_paragraphs() -> None:
    text = (
        "CHAPTER I\n\nIt was a dark\nand stormy   night\twithout\n  an end\n \n"
        "Paragraph two begins. It ends here\n\n\n\nThree."
    )
    assert split_sentences(text) == (
        "CHAPTER I",
        "It was a dark and stormy night without an end",
        "Paragraph two begins.",
        "It ends here",
        "Three.",
    )


_ALPHABET = st.sampled_from(
    [*"aAbBzZ019 .!?\"'“”‘’()[]_-,;:\n\t", "É", "ß", "²", "\xa0", "\u2028", "Mr", "Mrs", "No"]
)
texts = st.lists(_ALPHABET, max_size=80).map("".join)


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    remaining = iter(big)
    return all(word in remaining for word in small)


@given(texts)
def test_split_sentences_properties(text: str) -> None:
    pieces = split_sentences(text)
    assert all(piece and piece == piece.strip() for piece in pieces)
    assert all(any(ch.isalpha() for ch in piece) for piece in pieces)
    assert all("\n" not in piece for piece in pieces)
    words = [word for piece in pieces for word in piece.split()]
    assert _is_subsequence(words, text.split())
    for piece in pieces:
        assert split_sentences(piece) == (piece,)  # a piece never splits further


@given(texts)
def test_split_sentences_single_paragraph_round_trip(text: str) -> None:
    paragraph = text.replace("\n", " ")
    tokens = paragraph.split()
    pieces = split_sentences(paragraph)
    if all(any(ch.isalpha() for ch in token) for token in tokens):
        assert " ".join(pieces) == " ".join(tokens)


def test_split_sentences_handles_a_large_text() -> None:
    # Speed is measured by the benchmarks, not asserted here (noisy machines).
    text = ("Mr. Smith went to Washington. “Did he?” she asked! It was 1901. " * 5 + "\n\n") * 2000
    pieces = split_sentences(text)
    assert len(pieces) == 2000 * 5 * 3


def test_module_import_is_light() -> None:
    assert corpus.__name__ == "pytest_niah.inputs.corpus"
    import subprocess
    import sys

    code = (
        "import sys, pytest_niah.inputs.corpus; "
        "print(sorted(m for m in ('filelock', 'platformdirs', 'urllib.request', 'numpy') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.stdout.strip() == "[]"
