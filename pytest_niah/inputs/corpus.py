"""Haystack sources: a local folder of UTF-8 books, or the pinned public-domain set.

Folders are read here; the pinned set (``gutenberg``) is downloaded and verified by
:mod:`pytest_niah.gutenberg`, and text cleaning lives in :mod:`pytest_niah.text`.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from pytest_niah.errors import CorpusError
from pytest_niah.inputs.text import normalize_text, split_sentences, strip_gutenberg_boilerplate

__all__ = [
    "GUTENBERG_SPEC",
    "Book",
    "Corpus",
    "CorpusError",
    "load_corpus",
    "load_folder",
    "read_book",
    "read_files",
]

GUTENBERG_SPEC = "gutenberg"
_FOLDER_FIX = (
    "Fix: pass --niah-corpus a folder of UTF-8 .txt files, or --niah-corpus=gutenberg "
    "to download the pinned public-domain books."
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
    books = read_files(_book_files(folder))
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
                f"Cannot read corpus file {path}: {exc}. Fix: check that it is readable."
            ) from exc
        stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
    return _read_stamped(tuple(sorted(stamps, key=lambda s: (Path(s[0]).stem, s[0]))))


@functools.lru_cache(maxsize=8)
def _read_stamped(stamps: tuple[tuple[str, int, int], ...]) -> tuple[Book, ...]:
    return tuple(read_book(Path(path)) for path, _, _ in stamps)


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
            :data:`pytest_niah.gutenberg.DEFAULT_BASE_URL`.

    Returns:
        The corpus.

    Raises:
        CorpusError: If the corpus cannot be loaded.
    """
    if isinstance(spec, str) and spec == GUTENBERG_SPEC:
        from pytest_niah.inputs.gutenberg import DEFAULT_BASE_URL, ENV_BASE_URL, gutenberg_corpus

        url = base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        return gutenberg_corpus(cache_dir, url)
    _did_you_mean_gutenberg(spec)
    return load_folder(spec)


def _did_you_mean_gutenberg(spec: str | os.PathLike[str]) -> None:
    """Refuse a missing folder whose name looks like a misspelt ``gutenberg``.

    Raises:
        CorpusError: If the folder does not exist and its name is close to ``gutenberg``.
    """
    folder = Path(os.fspath(spec)).expanduser()
    name = folder.name.lower()
    if folder.exists() or not name:
        return
    if difflib.get_close_matches(name, [GUTENBERG_SPEC], n=1, cutoff=0.7):
        raise CorpusError(
            f"Corpus folder {folder} does not exist",
            f"did you mean --niah-corpus={GUTENBERG_SPEC}? It downloads the pinned "
            "public-domain books; otherwise pass --niah-corpus a folder of UTF-8 .txt files.",
        )
