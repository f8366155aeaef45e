"""A persistent embedding cache: one SQLite file keyed by (model fingerprint, text hash).

Embedding tens of thousands of long haystacks is the expensive step of a run, and the
same texts come back run after run, so vectors are kept on disk. The file is safe to
share between processes (pytest-xdist workers): WAL journaling, a busy timeout, short
write transactions, and ``INSERT OR IGNORE`` so that a write losing a race is harmless.
Every write is one transaction, so a killed run leaves whole chunks or nothing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from pytest_niah.config.paths import CACHE_ENV, cache_root
from pytest_niah.errors import CacheError

__all__ = [
    "SCHEMA_VERSION",
    "CacheError",
    "CachingEmbedder",
    "EmbeddingCache",
    "default_cache_path",
    "text_key",
]

SCHEMA_VERSION = 1
CACHE_FILE = "embeddings.sqlite"
_DTYPE = "float32"
# SQLite allows 999 bound parameters in old builds; stay well below.
_LOOKUP_CHUNK = 500
_NO_CACHE_FIX = "or run without the cache (--niah-no-cache)"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS niah_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS embeddings ("
    " fingerprint TEXT NOT NULL,"
    " text_sha256 TEXT NOT NULL,"
    " dim INTEGER NOT NULL,"
    " dtype TEXT NOT NULL,"
    " vector BLOB NOT NULL,"
    " PRIMARY KEY (fingerprint, text_sha256)"
    ") WITHOUT ROWID",
)


def default_cache_path() -> Path:
    """The embedding cache file below the cache root (see ``config.paths.cache_root``)."""
    return cache_root() / CACHE_FILE


def text_key(text: str) -> str:
    """The cache key of a text: the hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """Float32 vectors in one SQLite file, keyed by (fingerprint, SHA-256 of the text).

    Args:
        path: The database file; created with its folder if missing.
        timeout: Seconds to wait for another process's write lock before failing.

    Raises:
        CacheError: If the folder is not writable, or the file is not an intact cache.
    """

    def __init__(self, path: Path | str, *, timeout: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        self.timeout = timeout
        self._hits = self._misses = self._writes = 0
        self._ensure_folder()
        self._conn: sqlite3.Connection | None = self._open()

    def _ensure_folder(self) -> None:
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise CacheError(
                self._folder_message("cannot be created (a file is in the way)")
            ) from exc
        except OSError as exc:
            raise CacheError(self._folder_message(f"cannot be created ({exc})")) from exc
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CacheError(self._folder_message("is not writable"))

    def _folder_message(self, problem: str) -> str:
        return (
            f"the embedding cache folder {self.path.parent} {problem}. Fix: make it writable, "
            f"point the cache elsewhere (--niah-cache-dir or {CACHE_ENV}), {_NO_CACHE_FIX}."
        )

    def _corrupt_message(self, problem: str) -> str:
        return (
            f"the embedding cache {self.path} {problem}. Fix: delete that file (it only holds "
            f"embeddings, which are recomputed), {_NO_CACHE_FIX}."
        )

    def _open(self) -> sqlite3.Connection:
        if self.path.exists() and not self.path.is_file():
            raise CacheError(
                f"the embedding cache {self.path} is a folder (or another non-file) where the "
                f"database file goes. Fix: remove it or move it away, point the cache elsewhere "
                f"(--niah-cache-dir or {CACHE_ENV}), {_NO_CACHE_FIX}."
            )
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise CacheError(self._folder_message(f"cannot hold a database ({exc})")) from exc
        try:
            # Switching a new file to WAL and creating the schema can fail with SQLITE_BUSY
            # without the busy handler when two processes race; a file lock orders only that.
            from filelock import FileLock, Timeout

            try:
                with FileLock(f"{self.path}.lock", timeout=self.timeout):
                    self._configure(conn)
                    self._check_schema(conn)
            except Timeout as exc:
                raise CacheError(self._locked_message(exc)) from exc
        except CacheError:
            conn.close()
            raise
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(self._locked_message(exc)) from exc
            raise CacheError(self._corrupt_message(f"cannot be opened ({exc})")) from exc
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise CacheError(self._corrupt_message(f"is not a valid SQLite cache ({exc})")) from exc
        return conn

    def _locked_message(self, exc: BaseException) -> str:
        return (
            f"the embedding cache {self.path} stayed locked by another process for "
            f"{self.timeout:g} s ({exc}). Fix: wait for the other run to finish, point this run "
            f"at its own cache (--niah-cache-dir), {_NO_CACHE_FIX}."
        )

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise CacheError(
                self._corrupt_message(f"cannot use write-ahead logging (journal mode {mode})")
            )
        conn.execute("PRAGMA synchronous = NORMAL")
        # quick_check(1): stop at the first problem; one is enough to refuse the file.
        status = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if status != "ok":
            raise CacheError(self._corrupt_message(f"is damaged (quick_check: {status})"))

    def _check_schema(self, conn: sqlite3.Connection) -> None:
        with _transaction(conn):
            for statement in _SCHEMA:
                conn.execute(statement)
            row = conn.execute("SELECT version FROM niah_schema").fetchone()
            if row is None:
                conn.execute("INSERT INTO niah_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        version = SCHEMA_VERSION if row is None else row[0]
        if version != SCHEMA_VERSION:
            raise CacheError(
                self._corrupt_message(
                    f"has schema version {version}, this pytest-niah reads {SCHEMA_VERSION}"
                )
            )

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection.

        Raises:
            CacheError: If the cache was closed.
        """
        if self._conn is None:
            raise CacheError(f"the embedding cache {self.path} is closed")
        return self._conn

    def get_many(self, fingerprint: str, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """Look texts up.

        Args:
            fingerprint: The key space (a model fingerprint, with ``:query``/``:document``).
            texts: Texts to look up; repeats are fine.

        Returns:
            Index into ``texts`` -> float32 vector, for the texts found.
        """
        found = self.lookup(fingerprint, texts)
        self._hits += len(found)
        self._misses += len(texts) - len(found)
        return found

    def lookup(self, fingerprint: str, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """Like :meth:`get_many`, without counting hits and misses."""
        keys = [text_key(text) for text in texts]
        vectors = self._fetch(fingerprint, list(dict.fromkeys(keys)))
        return {i: vectors[key].copy() for i, key in enumerate(keys) if key in vectors}

    def _fetch(self, fingerprint: str, keys: list[str]) -> dict[str, np.ndarray]:
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._run(
                lambda conn, chunk=chunk, marks=marks: conn.execute(
                    "SELECT text_sha256, dim, dtype, vector FROM embeddings "
                    f"WHERE fingerprint = ? AND text_sha256 IN ({marks})",
                    (fingerprint, *chunk),
                ).fetchall()
            )
            for key, dim, dtype, blob in rows:
                vector = _decode(dim, dtype, blob)
                if vector is not None:
                    vectors[key] = vector
        return vectors

    def put_many(self, fingerprint: str, texts: Sequence[str], vectors: Any) -> None:
        """Store one vector per text, in one transaction; rows with NaN or inf are skipped.

        Args:
            fingerprint: The key space (a model fingerprint, with ``:query``/``:document``).
            texts: The embedded texts.
            vectors: A 2-D array with one row per text; stored as float32.

        Raises:
            ValueError: If the rows do not match the texts.
        """
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but vectors of shape {matrix.shape}")
        finite = np.isfinite(matrix).all(axis=1)
        rows = [
            (fingerprint, text_key(text), matrix.shape[1], _DTYPE, matrix[i].tobytes())
            for i, text in enumerate(texts)
            if finite[i]
        ]
        if rows:
            self._writes += self._run(lambda conn: _insert(conn, rows))

    def count(self, fingerprint: str | None = None) -> int:
        """Stored vectors, all or under one fingerprint.

        Args:
            fingerprint: An exact key space, or a model fingerprint, which also covers
                its ``fingerprint:query`` and ``fingerprint:document`` key spaces.
        """
        where, params = _where(fingerprint)
        sql = f"SELECT COUNT(*) FROM embeddings{where}"
        return int(self._run(lambda conn: conn.execute(sql, params).fetchone()[0]))

    def clear(self, fingerprint: str | None = None) -> int:
        """Delete stored vectors, all or under one fingerprint (as in :meth:`count`).

        Returns:
            How many vectors were deleted.
        """
        where, params = _where(fingerprint)
        sql = f"DELETE FROM embeddings{where}"

        def delete(conn: sqlite3.Connection) -> int:
            with _transaction(conn):
                return int(conn.execute(sql, params).rowcount)

        return int(self._run(delete))

    def stats(self) -> dict[str, int]:
        """Texts found (hits), not found (misses) and vectors written by this instance."""
        return {"hits": self._hits, "misses": self._misses, "writes": self._writes}

    def close(self) -> None:
        """Close the connection; closing twice is fine."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, action: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run one database action, turning SQLite failures into a :class:`CacheError`."""
        try:
            return action(self.connection)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(self._locked_message(exc)) from exc
            raise CacheError(self._corrupt_message(f"cannot be used ({exc})")) from exc
        except sqlite3.DatabaseError as exc:
            raise CacheError(self._corrupt_message(f"is damaged ({exc})")) from exc


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception (Ctrl-C too)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        # IMMEDIATE takes the write lock up front, so the busy timeout applies to it.
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        else:
            self._rollback()

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def _transaction(conn: sqlite3.Connection) -> _Transaction:
    return _Transaction(conn)


def _insert(conn: sqlite3.Connection, rows: list[tuple[str, str, int, str, bytes]]) -> int:
    with _transaction(conn):
        before = conn.total_changes
        conn.executemany(
            "INSERT OR IGNORE INTO embeddings (fingerprint, text_sha256, dim, dtype, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        return conn.total_changes - before


def _where(fingerprint: str | None) -> tuple[str, tuple[str, ...]]:
    """SQL filter for a key space and its ``:query``/``:document`` children."""
    if fingerprint is None:
        return "", ()
    # ';' follows ':' in every collation SQLite uses here (BINARY), so this is a prefix range.
    return (
        " WHERE fingerprint = ? OR (fingerprint >= ? AND fingerprint < ?)",
        (fingerprint, f"{fingerprint}:", f"{fingerprint};"),
    )


def _decode(dim: int, dtype: str, blob: bytes) -> np.ndarray | None:
    """The stored vector, or ``None`` when the row does not hold what it claims."""
    if dtype != _DTYPE or not isinstance(blob, bytes) or len(blob) != int(dim) * 4:
        return None
    return np.frombuffer(blob, dtype=np.float32)


class CachingEmbedder:
    """An :class:`~pytest_niah.embedders.Embedder` that looks vectors up before embedding.

    Only the unique texts missing from the cache reach the inner embedder, in chunks of
    ``chunk_size`` texts (longest first, so each chunk batches well); each chunk is
    written as soon as it is embedded, so an interrupted run keeps every finished chunk.
    Queries and documents live under ``<fingerprint>:query`` and ``<fingerprint>:document``.
    Rows are returned as the cache holds them, so every process sharing a file gets the
    same bytes; non-finite rows are returned but never stored. Embedders that return
    scipy sparse matrices (the lexical baseline) bypass the cache.

    Args:
        inner: The embedder that computes missing vectors.
        cache: Where vectors are kept.
        chunk_size: Texts per inner call and per write transaction.
    """

    def __init__(self, inner: Any, cache: EmbeddingCache, *, chunk_size: int = 256) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, not {chunk_size}")
        self.inner = inner
        self.cache = cache
        self.chunk_size = chunk_size
        self.name: str = inner.name
        self.embedded = 0
        self._bypass = _is_lexical(inner)

    @property
    def fingerprint(self) -> str:
        """The inner embedder's fingerprint."""
        return str(self.inner.fingerprint)

    @property
    def max_tokens(self) -> int | None:
        """The inner embedder's window."""
        return self.inner.max_tokens  # type: ignore[no-any-return]

    def token_spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """The inner embedder's token spans."""
        return self.inner.token_spans(texts)  # type: ignore[no-any-return]

    def encode_queries(self, texts: Sequence[str]) -> Any:
        """Queries, from the cache where possible."""
        return self._encode(texts, "query", self.inner.encode_queries)

    def encode_documents(self, texts: Sequence[str]) -> Any:
        """Documents, from the cache where possible."""
        return self._encode(texts, "document", self.inner.encode_documents)

    def _encode(self, texts: Sequence[str], kind: str, encode: Callable[[list[str]], Any]) -> Any:
        if self._bypass:
            return encode(list(texts))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)  # as the sentence-transformers backend
        key = f"{self.fingerprint}:{kind}"
        rows: dict[int, np.ndarray] = self.cache.get_many(key, texts)
        missing = _longest_first(texts[i] for i in range(len(texts)) if i not in rows)
        fresh: dict[str, np.ndarray] = {}
        for chunk in _chunks(missing, self.chunk_size):
            vectors = encode(chunk)
            if _is_sparse(vectors):
                # Found out late: hand the whole request over, as if uncached.
                self._bypass = True
                return encode(list(texts))
            fresh.update(self._store(key, chunk, vectors))
        if fresh:
            fresh.update(self._stored_copies(key, list(fresh)))
        return _assemble(texts, rows, fresh)

    def _store(self, key: str, chunk: list[str], vectors: Any) -> dict[str, np.ndarray]:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(chunk):
            raise ValueError(
                f"{self.name!r} returned embeddings of shape {matrix.shape} for {len(chunk)} texts"
            )
        self.embedded += len(chunk)
        self.cache.put_many(key, chunk, matrix)
        return dict(zip(chunk, matrix, strict=True))

    def _stored_copies(self, key: str, texts: list[str]) -> dict[str, np.ndarray]:
        """What the cache holds for fresh texts: another process may have won the write."""
        found = self.cache.lookup(key, texts)
        return {texts[i]: vector for i, vector in found.items()}


def _assemble(
    texts: Sequence[str], rows: dict[int, np.ndarray], fresh: dict[str, np.ndarray]
) -> np.ndarray:
    vectors = [rows[i] if i in rows else fresh[text] for i, text in enumerate(texts)]
    dims = {v.shape[0] for v in vectors}
    if len(dims) > 1:
        raise CacheError(
            f"cached and fresh embeddings have different sizes {sorted(dims)} under one "
            f"fingerprint. Fix: delete the cache file, {_NO_CACHE_FIX}."
        )
    return np.stack(vectors).astype(np.float32, copy=False)


def _longest_first(texts: Iterator[str] | Sequence[str]) -> list[str]:
    """Unique texts, longest first (ties keep their order), so chunks batch well."""
    unique = list(dict.fromkeys(texts))
    return sorted(unique, key=len, reverse=True)


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _is_sparse(matrix: Any) -> bool:
    # A sparse matrix implies scipy.sparse is loaded; never pay for importing it here.
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(matrix))


def _is_lexical(inner: Any) -> bool:
    """The lexical baseline fits on its first call, so it must never be chunked."""
    from pytest_niah.embed.embedders import LEXICAL_PREFIX, LexicalEmbedder

    return isinstance(inner, LexicalEmbedder) or str(getattr(inner, "name", "")).startswith(
        LEXICAL_PREFIX
    )
