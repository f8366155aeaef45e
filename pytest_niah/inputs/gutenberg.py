"""The pinned public-domain book set: ten Project Gutenberg books, downloaded and verified.

Each book is fetched from the GITenberg mirror at a fixed commit and checked by size and
sha256 before use. Downloads go to a per-user cache, are atomic (a partial or corrupted
file never appears under its final name) and are serialized across processes with a file
lock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any

from pytest_niah.config.paths import CACHE_ENV, cache_root
from pytest_niah.config.vocabulary import GUTENBERG
from pytest_niah.errors import CorpusError
from pytest_niah.inputs.books import Corpus, read_files

__all__ = [
    "DEFAULT_BASE_URL",
    "PinnedBook",
    "default_cache_dir",
    "download_gutenberg",
    "gutenberg_books",
    "gutenberg_corpus",
]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
ENV_BASE_URL = "NIAH_GUTENBERG_URL"
_CHUNK_BYTES = 1 << 16
_LOCK_TIMEOUT_S = 900.0
_PART_SUFFIX = ".part"
_DOWNLOAD_FIX = (
    f"check the network connection and the base URL ({ENV_BASE_URL}, default "
    f"{DEFAULT_BASE_URL}), or download the books yourself and point --niah-corpus at "
    "that local folder."
)


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
    resource = resources.files("pytest_niah") / "data" / "gutenberg.json"
    try:
        entries = json.loads(resource.read_text(encoding="utf-8"))["books"]
        return tuple(_pinned_book(entry) for entry in entries)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusError(
            f"The pinned book list {resource} is missing or malformed ({exc})",
            "reinstall pytest-niah.",
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


# --------------------------------------------------------------------------- download


def default_cache_dir() -> Path:
    """The folder of downloaded corpora: ``corpus`` below the cache root."""
    return cache_root() / "corpus"


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

    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / GUTENBERG
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CorpusError(
            f"Cannot create the corpus cache folder {folder}: {exc}",
            f"set {CACHE_ENV} to a writable folder.",
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
            f"Another process held the download lock {lock_path} for over {_LOCK_TIMEOUT_S:.0f} s",
            "wait for it to finish, or delete the lock file if no other pytest-niah run is active.",
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
                "discarded",
                f"make sure the base URL ({ENV_BASE_URL}) serves the pinned commit unchanged, "
                "or download the books yourself and point --niah-corpus at that local folder.",
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
            f"Downloading {url} failed: HTTP {exc.code} {exc.reason}", _DOWNLOAD_FIX
        ) from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise CorpusError(
            f"Downloading {url} failed: {type(exc).__name__}: {reason}", _DOWNLOAD_FIX
        ) from exc
    # http.client returns a short body silently when the peer closes early.
    if announced is not None and announced.isdigit() and size != int(announced):
        raise CorpusError(
            f"Downloading {url} failed: the connection closed after {size} of {announced} bytes",
            _DOWNLOAD_FIX,
        )
    return digest.hexdigest(), size


def _write(out: IO[bytes], chunk: bytes, folder: Path) -> None:
    try:
        out.write(chunk)
    except OSError as exc:
        raise CorpusError(
            f"Cannot write to the corpus cache folder {folder}: {exc}",
            f"free disk space or set {CACHE_ENV} to a writable folder.",
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
    books = read_files([folder / book.file for book in gutenberg_books()])
    return Corpus(name=GUTENBERG, books=books)
