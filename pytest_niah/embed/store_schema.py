"""The embedding cache's SQLite layout: its schema and version, a row's bytes, one transaction.

A row holds one float32 vector with its dimension; a row that does not hold what it claims
reads as ``None`` (:func:`decode_vector`). Every write is one ``BEGIN IMMEDIATE``
transaction (:class:`Transaction`). The store that uses them is
:class:`pytest_niah.embed.store.EmbeddingStore`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType

import numpy as np

from pytest_niah.config.paths import CACHE_ENV
from pytest_niah.errors import CacheError

CACHE_SCHEMA_VERSION = 2
DTYPE = "float32"
NO_CACHE = "or run without the cache (--niah-no-cache)"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS niah_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors ("
    " space TEXT NOT NULL,"
    " key TEXT NOT NULL,"
    " dim INTEGER NOT NULL,"
    " dtype TEXT NOT NULL,"
    " vector BLOB NOT NULL,"
    " PRIMARY KEY (space, key)"
    ") WITHOUT ROWID",
)


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema, or start afresh from an older one; refuse a newer one.

    Raises:
        CacheError: the file at ``path`` was written by a newer pytest-niah.
    """
    with Transaction(conn):
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='niah_schema'"
        ).fetchone()
        row = conn.execute("SELECT version FROM niah_schema").fetchone() if exists else None
        if row is not None and row[0] > CACHE_SCHEMA_VERSION:
            raise CacheError(
                f"the embedding cache {path} has schema version {row[0]}, written by a "
                f"newer pytest-niah (this one reads version {CACHE_SCHEMA_VERSION})",
                "upgrade pytest-niah, or give this version its own cache "
                f"(--niah-cache-dir or {CACHE_ENV}), {NO_CACHE}",
            )
        if row is not None and row[0] != CACHE_SCHEMA_VERSION:
            # An older layout only held embeddings: start afresh rather than refuse.
            for table in ("vectors", "embeddings", "niah_schema"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            row = None
        for statement in SCHEMA:
            conn.execute(statement)
        if row is None:
            conn.execute("DELETE FROM niah_schema")
            conn.execute("INSERT INTO niah_schema (version) VALUES (?)", (CACHE_SCHEMA_VERSION,))


class Transaction:
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


def insert_rows(conn: sqlite3.Connection, rows: list[tuple[str, str, int, str, bytes]]) -> int:
    """Insert the rows not stored yet, in one transaction; how many were new."""
    with Transaction(conn):
        before = conn.total_changes
        conn.executemany(
            "INSERT OR IGNORE INTO vectors (space, key, dim, dtype, vector) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        return conn.total_changes - before


def decode_vector(dim: object, dtype: object, blob: object) -> np.ndarray | None:
    """The stored vector, or ``None`` when the row does not hold what it claims.

    Any row that cannot be read as a finite float32 vector of ``dim`` values (a ``dim`` that
    is not a positive whole number, another dtype, a blob of another size, NaN or infinity)
    is ``None``: the caller drops it and embeds that input again. Never raises.
    """
    if type(dim) is not int or dim <= 0 or dtype != DTYPE:
        return None
    if not isinstance(blob, bytes) or len(blob) != dim * 4:
        return None
    vector = np.frombuffer(blob, dtype=np.float32)
    return vector if bool(np.isfinite(vector).all()) else None
