"""Books and corpora: what a haystack is cut from, read from UTF-8 files and fingerprinted.

The bottom of the corpus stage: :mod:`pytest_niah.inputs.corpus` (local folders, the
``--niah-corpus`` spec) and :mod:`pytest_niah.inputs.gutenberg` (the pinned download set)
both build on it, so neither imports the other's caller.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

from pytest_niah.bounded_reads import MiB, ReadRefused, read_bounded
from pytest_niah.errors import CorpusError
from pytest_niah.inputs.text import normalize_text, split_sentences, strip_gutenberg_boilerplate

__all__ = ["MAX_BOOK_BYTES", "Book", "Corpus", "decode_book", "read_book", "read_files"]

# The most read of one book: the longest Gutenberg books are a few MiB.
MAX_BOOK_BYTES = 64 * MiB


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
        raw = read_bounded(path, MAX_BOOK_BYTES, "corpus book")
    except ReadRefused as exc:
        raise CorpusError(f"Corpus file {path}: {exc.problem}", f"{exc.hint}.") from None
    except OSError as exc:
        raise CorpusError(
            f"Cannot read corpus file {path}: {exc.strerror or exc}",
            "check that the file exists and is readable.",
        ) from exc
    return decode_book(path.stem, raw, str(path))


def decode_book(name: str, raw: bytes, source: str) -> Book:
    """Turn a book file's raw bytes into a book: the one rule for every corpus.

    The text is decoded as UTF-8 (a BOM allowed), its line endings normalized and its
    Project Gutenberg header, licence and footer stripped, so that no licence text ever
    reaches a haystack; the sha256 is that of ``raw``, whatever the source.

    Args:
        name: The book's name (a file stem, e.g. ``"moby_dick"``).
        raw: The file's bytes.
        source: Where the bytes came from, named in errors.

    Returns:
        The book.

    Raises:
        CorpusError: If ``raw`` is not valid UTF-8.
    """
    return Book(
        name=name,
        text=strip_gutenberg_boilerplate(normalize_text(_decode_utf8(raw, source))),
        source=source,
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def _decode_utf8(raw: bytes, path: Path | str) -> str:
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start
        raise CorpusError(
            f"Corpus file {path} is not valid UTF-8: byte 0x{raw[offset]:02x} at offset "
            f"{offset} cannot be decoded",
            "re-save the file as UTF-8 (for example `iconv -f latin1 -t utf-8`), or remove it "
            "from the corpus folder.",
        ) from exc


def read_files(files: list[Path]) -> tuple[Book, ...]:
    """Read files through the in-process cache, keyed by path, size and mtime."""
    stamps = []
    for file in files:
        # absolute(), not resolve(): a symlinked book keeps the link's name.
        path = file.absolute()
        try:
            stat = path.stat()
        except OSError as exc:
            raise CorpusError(
                f"Cannot read corpus file {path}: {exc}", "check that it is readable."
            ) from exc
        stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
    return _read_stamped(tuple(sorted(stamps, key=lambda s: (Path(s[0]).stem, s[0]))))


@functools.lru_cache(maxsize=8)
def _read_stamped(stamps: tuple[tuple[str, int, int], ...]) -> tuple[Book, ...]:
    return tuple(read_book(Path(path)) for path, _, _ in stamps)
