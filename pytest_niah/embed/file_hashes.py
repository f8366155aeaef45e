"""File hashes: a file's sha256, streamed, and memoised in a small SQLite file.

Hashes are memoised on (path, inode, size, mtime_ns, ctime_ns) in a small SQLite file beside
the caches, so a warm run does not re-read gigabytes; an edit that puts back the size and
modification time still moves the inode change time, which no program can set, so it is
read again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path

MEMO_FILE = "file-hashes.sqlite"
MEMO_TABLE = "file_hashes"  # keyed on the inode and ctime too (the table "hashes" was not)
_CHUNK = 1 << 20
# A file changed this recently may change again within the same mtime tick (file systems
# stamp coarsely), keeping size and mtime_ns: its hash is not memoised until it has settled.
_SETTLED_NS = 2_000_000_000


class HashMemo:
    """Remembered file hashes; a memo that cannot be opened or written just isn't used."""

    def __init__(self, folder: Path | None) -> None:
        self._conn: sqlite3.Connection | None = None
        if folder is None:
            return
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(Path(folder) / MEMO_FILE, timeout=30)
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {MEMO_TABLE} (path TEXT, inode INTEGER, "
                "size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, sha256 TEXT NOT NULL, "
                "PRIMARY KEY (path, inode, size, mtime_ns, ctime_ns))"
            )
        except (OSError, sqlite3.Error):
            self._conn = None

    def __enter__(self) -> HashMemo:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._conn is not None:
            self._conn.close()

    def digest(self, path: Path) -> str:
        """The sha256 (hex) of the file at ``path``: remembered, else read and remembered."""
        real = os.path.realpath(path)
        stat = os.stat(real)
        # The inode change time moves on every write, and no program can set it back.
        key = (real, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        if self._conn is not None:
            try:
                row = self._conn.execute(
                    f"SELECT sha256 FROM {MEMO_TABLE} WHERE path=? AND inode=? AND size=? "
                    "AND mtime_ns=? AND ctime_ns=?",
                    key,
                ).fetchone()
            except sqlite3.Error:
                row = None
            if row is not None:
                return str(row[0])
        digest = _sha256(real)
        changed = max(stat.st_mtime_ns, stat.st_ctime_ns)
        if self._conn is not None and time.time_ns() - changed > _SETTLED_NS:
            try:
                with self._conn:
                    self._conn.execute(
                        f"INSERT OR REPLACE INTO {MEMO_TABLE} VALUES (?, ?, ?, ?, ?, ?)",
                        (*key, digest),
                    )
            except sqlite3.Error:
                pass  # the memo only saves time
        return digest


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
