"""The ten pinned public-domain books, shipped inside the package: ``--niah-corpus=packaged``.

Each book of the pinned set (``data/gutenberg.json``, the manifest of titles, sizes and
sha256 checksums that :mod:`pytest_niah.inputs.gutenberg` downloads by) is stored
xz-compressed as ``data/corpus/<file>.xz``: the exact bytes of the pinned download, Project
Gutenberg header, licence and footer included, so that each copy carries the licence its
terms ask of a copy under the Project Gutenberg name. Every book is checked against its
pinned size and sha256 when it is read. Its text goes through the same
:func:`~pytest_niah.inputs.books.decode_book` as a book in a folder, which strips the header,
licence and footer: no licence text reaches a haystack, and the corpus (text, names and
fingerprint) is the one a download or a folder of the same books gives, so metrics are the
same digit for digit.

:func:`describe` and :func:`export` serve the ``pytest-niah corpus`` command.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_niah.config.vocabulary import PACKAGED
from pytest_niah.errors import CorpusError
from pytest_niah.files import write_atomic
from pytest_niah.inputs.books import Corpus, decode_book
from pytest_niah.inputs.gutenberg import PinnedBook, gutenberg_books

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = ["DATA", "PackagedBook", "describe", "export", "packaged_corpus"]

# The folder of the compressed books inside the installed package.
DATA: Traversable = resources.files("pytest_niah") / "data" / "corpus"
COMPRESSED_SUFFIX = ".xz"
_REINSTALL = "reinstall pytest-niah (pip install --force-reinstall pytest-niah)"


@dataclass(frozen=True)
class PackagedBook:
    """One book shipped inside the package, as ``pytest-niah corpus`` lists it.

    Attributes:
        name: The book's name in a corpus (its file stem), e.g. ``"moby_dick"``.
        file: The file an export writes, e.g. ``"moby_dick.txt"``.
        title: Human-readable title.
        author: Author as credited.
        gutenberg_id: Project Gutenberg eBook number.
        sha256: Hex sha256 of the book file (checked): ``sha256sum`` of an exported file.
        bytes: Size of the book file.
        compressed_bytes: Size of the compressed copy inside the package.
    """

    name: str
    file: str
    title: str
    author: str
    gutenberg_id: int
    sha256: str
    bytes: int
    compressed_bytes: int


def describe() -> list[PackagedBook]:
    """List the packaged books, each read and checked against its pinned checksum.

    Returns:
        One row per book, in the manifest's order.

    Raises:
        CorpusError: If a packaged book is missing, unreadable or altered.
    """
    rows = []
    for pinned in gutenberg_books():
        compressed = _read_compressed(pinned)
        _raw_bytes(pinned, compressed)
        rows.append(
            PackagedBook(
                name=Path(pinned.file).stem,
                file=pinned.file,
                title=pinned.title,
                author=pinned.author,
                gutenberg_id=pinned.gutenberg_id,
                sha256=pinned.sha256,
                bytes=pinned.bytes,
                compressed_bytes=len(compressed),
            )
        )
    return rows


def export(folder: str | os.PathLike[str]) -> list[Path]:
    """Write the packaged books, unaltered, to ``folder`` (created when missing).

    The files are those of the pinned download, byte for byte, so the folder works as
    ``--niah-corpus=FOLDER`` with the same fingerprint and results as ``packaged``. A file
    already there with the same bytes is kept; a different one is never overwritten.

    Args:
        folder: Where to write the ``.txt`` files.

    Returns:
        The paths of the book files, in the manifest's order.

    Raises:
        CorpusError: If a packaged book is missing or altered, ``folder`` is a file, a file of
            the same name with other content is in the way, or the folder cannot be written.
    """
    target = Path(os.fspath(folder)).expanduser()
    if target.exists() and not target.is_dir():
        raise CorpusError(
            f"Cannot export the packaged books to {target}: it is a file, not a folder",
            "give a folder (new, empty, or an earlier export) to write the books into",
        )
    books = [(pinned, _raw_bytes(pinned, _read_compressed(pinned))) for pinned in gutenberg_books()]
    in_the_way = [
        target / pinned.file for pinned, raw in books if _differs(target / pinned.file, raw)
    ]
    if in_the_way:
        raise CorpusError(
            f"Cannot export the packaged books to {target}: {len(in_the_way)} file(s) with "
            f"other content are in the way ({', '.join(p.name for p in in_the_way)})",
            "export to an empty or new folder, or remove those files first",
        )
    written = []
    for pinned, raw in books:
        path = target / pinned.file
        if not path.exists():
            try:
                write_atomic(path, raw)
            except OSError as exc:
                raise CorpusError(
                    f"Cannot write {path}: {exc.strerror or exc}",
                    "export to a folder you can write to, with ~8 MB free",
                ) from exc
        written.append(path)
    return written


def _differs(path: Path, raw: bytes) -> bool:
    """Whether something other than exactly ``raw`` is at ``path``."""
    if not path.exists() and not path.is_symlink():
        return False
    try:
        return not path.is_file() or path.read_bytes() != raw
    except OSError:
        return True


@functools.lru_cache(maxsize=1)
def packaged_corpus() -> Corpus:
    """The packaged books as a corpus named ``"packaged"`` (read and checked once).

    Returns:
        The ten pinned books, sorted by name, boilerplate stripped.

    Raises:
        CorpusError: If a packaged book is missing, unreadable or altered.
    """
    books = []
    for pinned in gutenberg_books():
        raw = _raw_bytes(pinned, _read_compressed(pinned))
        books.append(decode_book(Path(pinned.file).stem, raw, _source(pinned)))
    return Corpus(name=PACKAGED, books=tuple(sorted(books, key=lambda book: book.name)))


def _resource(pinned: PinnedBook) -> Traversable:
    return DATA / (pinned.file + COMPRESSED_SUFFIX)


def _source(pinned: PinnedBook) -> str:
    return f"{PACKAGED}:{pinned.file}"


def _read_compressed(pinned: PinnedBook) -> bytes:
    resource = _resource(pinned)
    try:
        return resource.read_bytes()
    except OSError as exc:
        raise CorpusError(
            f"The packaged book {pinned.file} ({resource}) cannot be read: {exc}",
            _REINSTALL,
        ) from exc


def _raw_bytes(pinned: PinnedBook, compressed: bytes) -> bytes:
    """Decompress a packaged book and check it against its pinned size and sha256.

    Raises:
        CorpusError: If it does not decompress or is not the pinned file.
    """
    import lzma

    try:
        raw = lzma.decompress(compressed, format=lzma.FORMAT_XZ)
    except lzma.LZMAError as exc:
        raise CorpusError(
            f"The packaged book {_source(pinned)} is damaged: {exc}", _REINSTALL
        ) from exc
    sha256 = hashlib.sha256(raw).hexdigest()
    if len(raw) != pinned.bytes or sha256 != pinned.sha256:
        raise CorpusError(
            f"The packaged book {_source(pinned)} is not the pinned file: expected sha256 "
            f"{pinned.sha256} ({pinned.bytes} bytes), got {sha256} ({len(raw)} bytes)",
            _REINSTALL,
        )
    return raw
