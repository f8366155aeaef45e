"""Haystack sources: a local folder of UTF-8 books, or the pinned public-domain set.

The pinned set (``gutenberg``) is ten Project Gutenberg books fetched from the
GITenberg mirrors on GitHub at fixed commits and verified by size and sha256
before use. Downloads go to a per-user cache, are atomic (a partial or corrupted
file never appears under its final name) and are serialized across processes
with a file lock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any

__all__ = [
    "DEFAULT_BASE_URL",
    "Book",
    "Corpus",
    "CorpusError",
    "PinnedBook",
    "default_cache_dir",
    "download_gutenberg",
    "gutenberg_books",
    "gutenberg_corpus",
    "load_corpus",
    "load_folder",
    "normalize_text",
    "read_book",
    "split_sentences",
    "strip_gutenberg_boilerplate",
]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"

GUTENBERG_SPEC = "gutenberg"
_ENV_CACHE_DIR = "NIAH_CACHE_DIR"
_ENV_BASE_URL = "NIAH_GUTENBERG_URL"
_CHUNK_BYTES = 1 << 16
_LOCK_TIMEOUT_S = 900.0
_PART_SUFFIX = ".part"
_FOLDER_FIX = (
    "Fix: pass --niah-corpus a folder of UTF-8 .txt files, or --niah-corpus=gutenberg "
    "to download the pinned public-domain books."
)
_DOWNLOAD_FIX = (
    "Fix: check the network connection and the base URL (NIAH_GUTENBERG_URL, default "
    f"{DEFAULT_BASE_URL}), or download the books yourself and point --niah-corpus at "
    "that local folder."
)


class CorpusError(RuntimeError):
    """A corpus could not be found, read, downloaded or verified.

    The message is one paragraph that names the input (folder, file or URL) and
    says how to fix it.
    """


# --------------------------------------------------------------------------- pinned books


@dataclass(frozen=True)
class PinnedBook:
    """One book of the pinned download set (an entry of ``data/gutenberg.json``).

    Attributes:
        file: File name in the cache folder, e.g. ``"moby_dick.txt"``.
        title: Human-readable title.
        author: Author as credited.
        gutenberg_id: Project Gutenberg eBook number.
        repository: GitHub ``owner/name`` of the mirror repository.
        commit: 40-hex commit the bytes are pinned to.
        path: Path of the file inside the repository.
        bytes: Exact size of the raw file.
        sha256: Hex sha256 of the raw file.
    """

    file: str
    title: str
    author: str
    gutenberg_id: int
    repository: str
    commit: str
    path: str
    bytes: int
    sha256: str

    def url(self, base_url: str = DEFAULT_BASE_URL) -> str:
        """Return the download URL of this book under ``base_url``.

        Args:
            base_url: Server root laid out like raw.githubusercontent.com.

        Returns:
            ``{base_url}/{repository}/{commit}/{path}``.
        """
        return f"{base_url.rstrip('/')}/{self.repository}/{self.commit}/{self.path}"


@functools.lru_cache(maxsize=1)
def gutenberg_books() -> tuple[PinnedBook, ...]:
    """Return the pinned books listed in the package data, in file order.

    Returns:
        The books of ``pytest_niah/data/gutenberg.json``.

    Raises:
        CorpusError: If the package data is missing or malformed.
    """
    resource = resources.files("pytest_niah").joinpath("data", "gutenberg.json")
    try:
        entries = json.loads(resource.read_text(encoding="utf-8"))["books"]
        return tuple(_pinned_book(entry) for entry in entries)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusError(
            f"The pinned book list {resource} is missing or malformed ({exc}). "
            "Fix: reinstall pytest-niah."
        ) from exc


def _pinned_book(entry: dict[str, Any]) -> PinnedBook:
    return PinnedBook(
        file=str(entry["file"]),
        title=str(entry["title"]),
        author=str(entry["author"]),
        gutenberg_id=int(entry["gutenberg_id"]),
        repository=str(entry["repository"]),
        commit=str(entry["commit"]),
        path=str(entry["path"]),
        bytes=int(entry["bytes"]),
        sha256=str(entry["sha256"]).lower(),
    )


# --------------------------------------------------------------------------- books and corpora


@dataclass(frozen=True)
class Book:
    r"""One decoded book.

    Attributes:
        name: File stem, e.g. ``"moby_dick"``.
        text: Decoded text, Gutenberg boilerplate stripped, newlines normalized to ``"\n"``.
        source: Path or URL it came from.
        sha256: Hex sha256 of the raw bytes.
    """

    name: str
    text: str
    source: str
    sha256: str

    @functools.cached_property
    def sentences(self) -> tuple[str, ...]:
        """The book's sentences, as :func:`split_sentences` gives them (computed once)."""
        return split_sentences(self.text)


@dataclass(frozen=True)
class Corpus:
    """A named, ordered set of books.

    Attributes:
        name: ``"gutenberg"`` or the folder path as given.
        books: Books sorted by name.
    """

    name: str
    books: tuple[Book, ...]

    def fingerprint(self) -> str:
        """Return a hex sha256 identifying the corpus content.

        It covers each book's name and raw-byte sha256 (sorted), so it is independent of
        the folder's location and of ``name``.
        """
        digest = hashlib.sha256()
        for name, sha in sorted((book.name, book.sha256) for book in self.books):
            digest.update(f"{name}\0{sha}\n".encode())
        return digest.hexdigest()

    @property
    def total_chars(self) -> int:
        """Total number of characters of all book texts."""
        return sum(len(book.text) for book in self.books)


# --------------------------------------------------------------------------- text cleaning

_START_RE = re.compile(
    r"^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG\b.*$", re.M | re.I
)
_END_RE = re.compile(r"^[ \t]*\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG\b.*$", re.M | re.I)
# Pre-2000s files open with a licence that ends at this line ("*END*THE SMALL PRINT! ...").
_SMALL_PRINT_END_RE = re.compile(r"^[ \t]*\*END\*?[ \t]*THE SMALL PRINT\b.*$", re.M | re.I)
_END_OF_BOOK_RE = re.compile(
    r"^[ \t]*End of (?:the )?Project Gutenberg(?:['’]s)?\b.*$", re.M | re.I
)
_CREDITS_RE = re.compile(
    r"^[ \t]*(?:Produced by|E-?text prepared by|This e-?text was prepared by|Transcribed by)\b",
    re.I,
)
# One or more blank (whitespace-only) lines.
_PARAGRAPH_BREAK_RE = re.compile(r"\n(?:[^\S\n]*\n)+")


def normalize_text(raw: str) -> str:
    r"""Strip a leading BOM and turn CRLF and bare CR line endings into ``"\n"``.

    Args:
        raw: Decoded text.

    Returns:
        The normalized text.
    """
    if raw.startswith("\ufeff"):
        raw = raw[1:]
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def strip_gutenberg_boilerplate(text: str) -> str:
    r"""Keep only the book between the Project Gutenberg start and end markers.

    Recognized start markers: ``*** START OF THIS/THE PROJECT GUTENBERG EBOOK ...``
    (with or without a space after ``***``) and, for old files, the
    ``*END*THE SMALL PRINT!`` line that closes a licence header. End markers:
    ``*** END OF THIS/THE PROJECT GUTENBERG EBOOK ...``, else an
    ``End of (the) Project Gutenberg...`` line. When a marker is found, a leading
    ``Produced by ...`` credits paragraph and a trailing ``End of the Project
    Gutenberg EBook of ...`` paragraph are dropped too, and surrounding whitespace is
    stripped.

    Args:
        text: Text with ``"\n"`` line endings (see :func:`normalize_text`).

    Returns:
        The book text, or ``text`` unchanged when it has no marker.
    """
    end_match = _END_RE.search(text)
    limit = end_match.start() if end_match else len(text)
    start = _body_start(text, limit)
    if end_match is None:
        fallback = _END_OF_BOOK_RE.search(text, start or 0)
        if fallback is not None:
            end_match, limit = fallback, fallback.start()
    if start is None and end_match is None:
        return text
    body = _drop_credits(text[start or 0 : limit].strip())
    return _drop_end_line(body).strip()


def _body_start(text: str, limit: int) -> int | None:
    """Return where the book starts (after the last header marker), or None."""
    ends = [m.end() for m in _START_RE.finditer(text, 0, limit)]
    # The small print sits at the end of some files (after the book); only a copy in
    # the first half can be the header.
    ends += [m.end() for m in _SMALL_PRINT_END_RE.finditer(text, 0, min(limit, len(text) // 2))]
    return max(ends) if ends else None


def _drop_credits(body: str) -> str:
    if not _CREDITS_RE.match(body):
        return body
    parts = _PARAGRAPH_BREAK_RE.split(body, maxsplit=1)
    return parts[1] if len(parts) == 2 else ""


def _drop_end_line(body: str) -> str:
    breaks = list(_PARAGRAPH_BREAK_RE.finditer(body))
    tail_start = breaks[-1].end() if breaks else 0
    if _END_OF_BOOK_RE.match(body, tail_start):
        return body[:tail_start]
    return body


# --------------------------------------------------------------------------- sentences

_CLOSERS = "\"'”’»)]_"
_OPENERS = "\"'“‘«([_"
# Terminal punctuation, optional closers, then the single space left by collapsing.
_BOUNDARY_RE = re.compile(f"[.!?][{re.escape(_CLOSERS)}]* ")
# Titles and Latin short forms that are almost never sentence ends.
_ABBREVIATIONS = frozenset(
    (
        "Mr", "Mrs", "Ms", "Messrs", "Mme", "Mlle", "Mons", "Dr", "St", "Ste", "Mt", "Prof",
        "Rev", "Revd", "Hon", "Gen", "Col", "Capt", "Lieut", "Lt", "Sgt", "Maj", "Gov", "Sen",
        "Jr", "Sr", "Gr", "Lat", "cf", "Cf", "viz", "vs", "e.g", "i.e",
    )
)  # fmt: skip
# Short forms that end a sentence as often as not ("No."), unless a number follows.
_NUMBER_ABBREVIATIONS = frozenset(
    (
        "No", "no", "Nos", "nos", "p", "pp", "ver", "vv", "vol", "Vol", "ch", "Ch", "chap",
        "Chap", "fig", "Fig", "art", "Art", "sect", "Sect", "l", "ll",
    )
)  # fmt: skip


def split_sentences(text: str) -> tuple[str, ...]:
    r"""Split text into sentences.

    Paragraphs are blocks separated by blank lines; inside one, whitespace runs collapse
    to single spaces. A sentence ends after ``.``, ``!`` or ``?`` (plus any closing
    quotes or brackets) when whitespace and then an uppercase letter, a digit or an
    opening quote follow; not after titles such as ``Mr.`` or single-letter initials
    (``H. G. Wells``; ``I.`` does split), nor after ``No.``/``p.``/``vol.`` when a digit
    follows. Pieces without any letter are dropped.

    Args:
        text: Text with ``"\n"`` line endings.

    Returns:
        The sentences, in order, each non-empty and stripped.
    """
    sentences: list[str] = []
    for block in _PARAGRAPH_BREAK_RE.split(text):
        paragraph = " ".join(block.split())
        if paragraph:
            sentences.extend(_split_paragraph(paragraph))
    return tuple(sentences)


def _split_paragraph(paragraph: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(paragraph):
        end = match.end()
        if not _is_sentence_end(paragraph, start, match.start(), end):
            continue
        _append_piece(pieces, paragraph[start : end - 1])
        start = end
    _append_piece(pieces, paragraph[start:])
    return pieces


def _is_sentence_end(paragraph: str, start: int, punct: int, end: int) -> bool:
    """Whether the punctuation at ``punct`` ends a sentence (``end`` is past the space)."""
    following = paragraph[end]
    if not (following.isupper() or following in "0123456789" or following in _OPENERS):
        return False
    if paragraph[punct] != "." or end - punct != 2:
        return True  # "!", "?", or "." followed by closing quotes
    space = paragraph.rfind(" ", start, punct)
    word = paragraph[start if space < 0 else space + 1 : punct].lstrip(_OPENERS)
    if word in _ABBREVIATIONS:
        return False
    if word in _NUMBER_ABBREVIATIONS:
        return not following.isdigit()
    # Single capital initials ("H. G. Wells"), but "I." is the pronoun or a numeral.
    return not (len(word) == 1 and word.isupper() and word != "I")


def _append_piece(pieces: list[str], piece: str) -> None:
    if any(map(str.isalpha, piece)):
        pieces.append(piece)


# --------------------------------------------------------------------------- local folders


def read_book(path: Path) -> Book:
    """Read one UTF-8 book file.

    Args:
        path: A ``.txt`` file; a UTF-8 BOM is allowed.

    Returns:
        The book, named after the file stem, with boilerplate stripped.

    Raises:
        CorpusError: If the file cannot be read or is not valid UTF-8.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorpusError(
            f"Cannot read corpus file {path}: {exc.strerror or exc}. "
            "Fix: check that the file exists and is readable."
        ) from exc
    text = _decode_utf8(raw, path)
    return Book(
        name=path.stem,
        text=strip_gutenberg_boilerplate(normalize_text(text)),
        source=str(path),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def _decode_utf8(raw: bytes, path: Path) -> str:
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start
        raise CorpusError(
            f"Corpus file {path} is not valid UTF-8: byte 0x{raw[offset]:02x} at offset "
            f"{offset} cannot be decoded. Fix: re-save the file as UTF-8 (for example "
            f"`iconv -f latin1 -t utf-8`), or remove it from the corpus folder."
        ) from exc


def load_folder(path: str | os.PathLike[str]) -> Corpus:
    """Load every ``*.txt`` file (non-recursive, dotfiles skipped) of a folder.

    Results are cached in-process, keyed by the absolute file paths, sizes and mtimes (ns),
    so loading an unchanged folder again returns the same books without re-reading.

    Args:
        path: The folder.

    Returns:
        A corpus named ``str(path)`` with books sorted by name.

    Raises:
        CorpusError: If the folder is missing, not a folder, holds no ``.txt`` file,
            holds only empty books, or a file cannot be read or decoded.
    """
    folder = Path(os.fspath(path)).expanduser()
    books = _read_files(_book_files(folder))
    if not any(book.text.strip() for book in books):
        raise CorpusError(
            f"The .txt files in corpus folder {folder} hold no text once the Project "
            f"Gutenberg boilerplate is removed. {_FOLDER_FIX}"
        )
    return Corpus(name=os.fspath(path), books=books)


def _book_files(folder: Path) -> list[Path]:
    if not folder.exists():
        raise CorpusError(f"Corpus folder {folder} does not exist. {_FOLDER_FIX}")
    if not folder.is_dir():
        raise CorpusError(f"Corpus path {folder} is not a folder. {_FOLDER_FIX}")
    try:
        files = [
            entry
            for entry in folder.iterdir()
            if entry.suffix.lower() == ".txt" and not entry.name.startswith(".") and entry.is_file()
        ]
    except OSError as exc:
        raise CorpusError(f"Cannot list corpus folder {folder}: {exc}. {_FOLDER_FIX}") from exc
    if not files:
        raise CorpusError(f"Corpus folder {folder} holds no .txt files. {_FOLDER_FIX}")
    return files


def _read_files(files: list[Path]) -> tuple[Book, ...]:
    """Read files through the in-process cache, keyed by path, size and mtime."""
    stamps = []
    for file in files:
        # absolute(), not resolve(): a symlinked book keeps the link's name.
        path = file.absolute()
        try:
            stat = path.stat()
        except OSError as exc:
            raise CorpusError(
                f"Cannot read corpus file {path}: {exc}. Fix: check that it is readable."
            ) from exc
        stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
    return _read_stamped(tuple(sorted(stamps, key=lambda s: (Path(s[0]).stem, s[0]))))


@functools.lru_cache(maxsize=8)
def _read_stamped(stamps: tuple[tuple[str, int, int], ...]) -> tuple[Book, ...]:
    return tuple(read_book(Path(path)) for path, _, _ in stamps)


# --------------------------------------------------------------------------- download


def default_cache_dir() -> Path:
    """Return the folder that holds downloaded corpora.

    Returns:
        ``<root>/corpus`` where root is ``$NIAH_CACHE_DIR`` if set, else
        ``platformdirs.user_cache_dir("pytest-niah")``.
    """
    override = os.environ.get(_ENV_CACHE_DIR)
    if override:
        return Path(override).expanduser() / "corpus"
    import platformdirs

    return Path(platformdirs.user_cache_dir("pytest-niah")) / "corpus"


def download_gutenberg(
    cache_dir: Path | None = None,
    base_url: str = DEFAULT_BASE_URL,
    *,
    timeout: float = 60.0,
) -> Path:
    """Make sure every pinned book is in ``cache_dir/gutenberg`` with the right checksum.

    Files already present with the pinned size and sha256 are kept; others are
    downloaded to a temporary file in the same folder, verified and atomically renamed.
    A file lock serializes concurrent callers (processes or threads).

    Args:
        cache_dir: Cache root; :func:`default_cache_dir` when None.
        base_url: Server root laid out like raw.githubusercontent.com.
        timeout: Socket timeout in seconds for each connection and read.

    Returns:
        The folder holding the books.

    Raises:
        CorpusError: On an HTTP or network error, a truncated body, a checksum
            mismatch, an unwritable cache folder, or a lock held too long.
    """
    from filelock import FileLock, Timeout

    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "gutenberg"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CorpusError(
            f"Cannot create the corpus cache folder {folder}: {exc}. Fix: set "
            f"{_ENV_CACHE_DIR} to a writable folder."
        ) from exc
    lock_path = folder / ".lock"
    try:
        with FileLock(str(lock_path), timeout=_LOCK_TIMEOUT_S):
            _remove_partial_files(folder)
            for book in gutenberg_books():
                target = folder / book.file
                if not _is_intact(target, book):
                    _download_book(book, book.url(base_url), target, timeout)
    except Timeout as exc:
        raise CorpusError(
            f"Another process held the download lock {lock_path} for over "
            f"{_LOCK_TIMEOUT_S:.0f} s. Fix: wait for it to finish, or delete the lock file if "
            "no other pytest-niah run is active."
        ) from exc
    return folder


def _remove_partial_files(folder: Path) -> None:
    # Only called under the lock, so any .part file is left over from a killed run.
    for leftover in folder.glob(f".*{_PART_SUFFIX}"):
        leftover.unlink(missing_ok=True)


def _is_intact(target: Path, book: PinnedBook) -> bool:
    try:
        if target.stat().st_size != book.bytes:
            return False
        with target.open("rb") as handle:
            digest = hashlib.sha256()
            while chunk := handle.read(_CHUNK_BYTES):
                digest.update(chunk)
    except OSError:
        return False
    return digest.hexdigest() == book.sha256


def _download_book(book: PinnedBook, url: str, target: Path, timeout: float) -> None:
    """Download ``url`` to ``target`` atomically, verifying size and sha256."""
    fd, part_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=_PART_SUFFIX
    )
    part = Path(part_name)
    try:
        with os.fdopen(fd, "wb") as out:
            sha256, size = _fetch(url, out, timeout, target.parent)
        if size != book.bytes or sha256 != book.sha256:
            raise CorpusError(
                f"Checksum mismatch for {url}: expected sha256 {book.sha256} "
                f"({book.bytes} bytes), got sha256 {sha256} ({size} bytes); the file was "
                "discarded. Fix: make sure the base URL (NIAH_GUTENBERG_URL) serves the "
                "pinned commit unchanged, or download the books yourself and point "
                "--niah-corpus at that local folder."
            )
        os.chmod(part, 0o644)  # mkstemp creates 0600; a shared cache must stay readable
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


def _fetch(url: str, out: IO[bytes], timeout: float, folder: Path) -> tuple[str, int]:
    """Stream ``url`` into ``out``; return the hex sha256 and size of what was written."""
    import http.client
    import urllib.error
    import urllib.request

    digest = hashlib.sha256()
    size = 0
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "pytest-niah"})
        # A fresh opener reads the proxy settings of the current environment.
        with urllib.request.build_opener().open(request, timeout=timeout) as response:
            announced = response.headers.get("Content-Length")
            while chunk := response.read(_CHUNK_BYTES):
                digest.update(chunk)
                _write(out, chunk, folder)
                size += len(chunk)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise CorpusError(
            f"Downloading {url} failed: HTTP {exc.code} {exc.reason}. {_DOWNLOAD_FIX}"
        ) from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise CorpusError(
            f"Downloading {url} failed: {type(exc).__name__}: {reason}. {_DOWNLOAD_FIX}"
        ) from exc
    # http.client returns a short body silently when the peer closes early.
    if announced is not None and announced.isdigit() and size != int(announced):
        raise CorpusError(
            f"Downloading {url} failed: the connection closed after {size} of "
            f"{announced} bytes. {_DOWNLOAD_FIX}"
        )
    return digest.hexdigest(), size


def _write(out: IO[bytes], chunk: bytes, folder: Path) -> None:
    try:
        out.write(chunk)
    except OSError as exc:
        raise CorpusError(
            f"Cannot write to the corpus cache folder {folder}: {exc}. Fix: free disk "
            f"space or set {_ENV_CACHE_DIR} to a writable folder."
        ) from exc


def gutenberg_corpus(cache_dir: Path | None = None, base_url: str = DEFAULT_BASE_URL) -> Corpus:
    """Download (if needed) and load the pinned books.

    Args:
        cache_dir: Cache root; :func:`default_cache_dir` when None.
        base_url: Server root laid out like raw.githubusercontent.com.

    Returns:
        A corpus named ``"gutenberg"`` holding exactly the pinned books.

    Raises:
        CorpusError: If a download or a read fails.
    """
    folder = download_gutenberg(cache_dir, base_url)
    books = _read_files([folder / book.file for book in gutenberg_books()])
    return Corpus(name=GUTENBERG_SPEC, books=books)


def load_corpus(
    spec: str | os.PathLike[str],
    *,
    cache_dir: Path | None = None,
    base_url: str | None = None,
) -> Corpus:
    """Load a corpus from its command-line spec.

    Args:
        spec: ``"gutenberg"`` for the pinned download set (a local folder of that
            name must be given as ``./gutenberg``), otherwise a folder path.
        cache_dir: Cache root for downloads; :func:`default_cache_dir` when None.
        base_url: Download server root; else ``$NIAH_GUTENBERG_URL``, else
            :data:`DEFAULT_BASE_URL`.

    Returns:
        The corpus.

    Raises:
        CorpusError: If the corpus cannot be loaded.
    """
    if isinstance(spec, str) and spec == GUTENBERG_SPEC:
        url = base_url or os.environ.get(_ENV_BASE_URL) or DEFAULT_BASE_URL
        return gutenberg_corpus(cache_dir, url)
    return load_folder(spec)
