"""The persistent embedding cache: one SQLite file keyed by (model identity, input key).

An input key hashes exactly the tokens a model reads (see :mod:`pytest_niah.haystacks.plan`),
so two texts the model reads alike share one vector, run after run. The file is safe to
share between processes (pytest-xdist workers): WAL journaling, a busy timeout, short write
transactions and ``INSERT OR IGNORE``, so a write that loses a race is harmless. Every write
is one transaction: a killed run leaves whole chunks or nothing. Rows that cannot be right
(another dimension than the model's, NaN or infinity) are dropped when read and counted, so
the run embeds those inputs again instead of failing or scoring garbage. The file's layout
(schema, a row's bytes, one write transaction) is :mod:`pytest_niah.embed.store_schema`'s.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import numpy as np

from pytest_niah.config.paths import CACHE_ENV
from pytest_niah.embed.store_schema import (
    DTYPE,
    NO_CACHE,
    Transaction,
    check_schema,
    decode_vector,
    insert_rows,
)
from pytest_niah.errors import CacheError

T = TypeVar("T")

_LOOKUP_CHUNK = 500  # old SQLite builds allow 999 bound parameters


class EmbeddingStore:
    """Float32 vectors in one SQLite file, keyed by (key space, input key).

    The key space is a model identity's digest plus the input kind.

    Args:
        path: The database file; created with its folder if missing.
        timeout: Seconds to wait for another process's write lock.

    Raises:
        CacheError: the folder is not writable, or the file is not an SQLite database.
    """

    def __init__(self, path: Path | str, *, timeout: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        self.timeout = timeout
        self.hits = self.misses = self.writes = self.dropped = 0
        self._ensure_folder()
        self._conn: sqlite3.Connection | None = self._open()

    # -- opening ----------------------------------------------------------------------------

    def _ensure_folder(self) -> None:
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise CacheError(*self._folder("cannot be created (a file is in the way)")) from exc
        except OSError as exc:
            raise CacheError(*self._folder(f"cannot be created ({exc})")) from exc
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CacheError(*self._folder("is not writable"))

    def _folder(self, problem: str) -> tuple[str, str]:
        return (
            f"the embedding cache folder {self.path.parent} {problem}",
            f"make it writable, point the cache elsewhere (--niah-cache-dir or {CACHE_ENV}), "
            f"{NO_CACHE}",
        )

    def _damaged(self, problem: str) -> tuple[str, str]:
        return (
            f"the embedding cache {self.path} {problem}",
            f"delete that file (it only holds embeddings, which are recomputed), {NO_CACHE}",
        )

    def _locked(self, exc: BaseException) -> tuple[str, str]:
        return (
            f"the embedding cache {self.path} stayed locked by another process for "
            f"{self.timeout:g} s ({exc})",
            f"wait for the other run to finish, give this run its own cache (--niah-cache-dir), "
            f"{NO_CACHE}",
        )

    def _open(self) -> sqlite3.Connection:
        if self.path.is_symlink():  # SQLite would write the file it points to
            raise CacheError(
                f"the embedding cache {self.path} is a symbolic link; pytest-niah never "
                "writes through one in its cache (the run would change the file it points to)",
                f"remove the link, point the cache elsewhere (--niah-cache-dir or {CACHE_ENV}), "
                f"{NO_CACHE}",
            )
        if self.path.exists() and not self.path.is_file():
            raise CacheError(
                f"the embedding cache {self.path} is a folder (or another non-file) where the "
                "database file goes",
                f"remove or move it, point the cache elsewhere (--niah-cache-dir or {CACHE_ENV}), "
                f"{NO_CACHE}",
            )
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise CacheError(*self._folder(f"cannot hold a database ({exc})")) from exc
        try:
            # Switching a new file to WAL and creating the schema can fail with SQLITE_BUSY
            # when two processes race; a file lock orders only that.
            from filelock import FileLock, Timeout

            try:
                with FileLock(f"{self.path}.lock", timeout=self.timeout):
                    self._configure(conn)
                    check_schema(conn, self.path)
            except Timeout as exc:
                raise CacheError(*self._locked(exc)) from exc
        except CacheError:
            conn.close()
            raise
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(*self._locked(exc)) from exc
            raise CacheError(*self._damaged(f"cannot be opened ({exc})")) from exc
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise CacheError(*self._damaged(f"is not a valid SQLite cache ({exc})")) from exc
        return conn

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise CacheError(*self._damaged(f"cannot use write-ahead logging (mode {mode})"))
        conn.execute("PRAGMA synchronous = NORMAL")
        status = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if status != "ok":
            raise CacheError(*self._damaged(f"is damaged (quick_check: {status})"))

    # -- use --------------------------------------------------------------------------------

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection.

        Raises:
            CacheError: the store was closed.
        """
        if self._conn is None:
            raise CacheError(f"the embedding cache {self.path} is closed", "open it again")
        return self._conn

    def get_many(
        self, space: str, keys: Sequence[str], dim: int | None = None
    ) -> dict[str, np.ndarray]:
        """The stored vectors of ``keys`` (those found), checked.

        Args:
            space: The key space (model identity and input kind).
            keys: Input keys; repeats are fine.
            dim: The model's dimension, when known: rows of another size are dropped.

        Returns:
            Key -> float32 vector, for the keys found with a usable vector.
        """
        unique = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        bad: list[str] = []
        for start in range(0, len(unique), _LOOKUP_CHUNK):
            chunk = unique[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT key, dim, dtype, vector FROM vectors WHERE space = ? AND key IN ({marks})"
            )
            params = (space, *chunk)
            rows: list[Any] = self._run(
                lambda conn, sql=sql, params=params: conn.execute(sql, params).fetchall()  # type: ignore[misc]
            )
            for key, stored_dim, dtype, blob in rows:
                vector = decode_vector(stored_dim, dtype, blob)
                if vector is None or (dim is not None and vector.shape[0] != dim):
                    bad.append(key)
                else:
                    found[key] = vector
        if bad:
            self._delete(space, bad)
        self.hits += len(found)
        self.misses += len(unique) - len(found)
        return found

    def put_many(self, space: str, keys: Sequence[str], vectors: Any) -> None:
        """Store one vector per key, in one transaction; rows with NaN or inf are skipped."""
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys but vectors of shape {matrix.shape}")
        finite = [bool(v) for v in np.isfinite(matrix).all(axis=1).ravel()]
        rows = [
            (space, key, matrix.shape[1], DTYPE, matrix[i].tobytes())
            for i, key in enumerate(keys)
            if finite[i]
        ]
        if rows:
            self.writes += self._run(lambda conn: insert_rows(conn, rows))

    def count(self, space: str | None = None) -> int:
        """Stored vectors, all or in one key space."""
        where, params = ("", ()) if space is None else (" WHERE space = ?", (space,))
        sql = f"SELECT COUNT(*) FROM vectors{where}"
        return int(self._run(lambda conn: conn.execute(sql, params).fetchone()[0]))

    def discard(self, space: str, keys: Sequence[str]) -> None:
        """Delete the vectors of ``keys`` (those that are stored), in one transaction.

        For vectors the caller found wrong: ``put_many`` never replaces a stored vector.
        """
        rows = [(space, key) for key in dict.fromkeys(keys)]

        def delete(conn: sqlite3.Connection) -> None:
            with Transaction(conn):
                conn.executemany("DELETE FROM vectors WHERE space = ? AND key = ?", rows)

        if rows:
            self._run(delete)

    def _delete(self, space: str, keys: list[str]) -> None:
        self.discard(space, keys)
        self.dropped += len(keys)

    def close(self) -> None:
        """Close the connection; closing twice is fine."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> EmbeddingStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """Run one database action, turning SQLite failures into a :class:`CacheError`."""
        try:
            return action(self.connection)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(*self._locked(exc)) from exc
            raise CacheError(*self._damaged(f"cannot be used ({exc})")) from exc
        except sqlite3.DatabaseError as exc:
            raise CacheError(*self._damaged(f"is damaged ({exc})")) from exc
