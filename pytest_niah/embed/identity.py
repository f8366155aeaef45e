"""The identity of an embedding: everything that changes its bits, and one hash of it.

One function, :func:`model_identity`, computes it; the embedding cache, the results cache,
the results file, snapshots and comparisons all use it. It covers

- the model's content: the sha256 of every file of a local (or packaged) model folder, or
  the commit of a model from the Hugging Face hub cache; never the folder's path, so the
  same weights copied elsewhere hit the cache;
- what pytest-niah does with it: device type and dtype, the window, prompts, model and
  encode keyword arguments;
- the versions of the libraries that compute it (torch, transformers, sentence-transformers,
  tokenizers, model2vec).

File hashes are streamed, and memoised on (path, size, mtime_ns) in a small SQLite file
beside the caches, so a warm run does not re-read gigabytes. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_niah.digest import canonical_json
from pytest_niah.digest import digest as json_digest

# Bump when pytest-niah changes how it turns a text into a vector (inputs, pooling, casting).
EMBEDDING_SCHEMA = 2
LIBRARIES = ("torch", "transformers", "sentence-transformers", "tokenizers", "model2vec")
MEMO_FILE = "file-hashes.sqlite"
_CHUNK = 1 << 20
# A file changed this recently may change again within the same mtime tick (file systems
# stamp coarsely), keeping size and mtime_ns: its hash is not memoised until it has settled.
_SETTLED_NS = 2_000_000_000
_HUB_SNAPSHOT = re.compile(
    r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/(?P<rev>[0-9a-f]{40})"
    r"(?:/(?P<sub>.*?))?/*$"
)


@dataclass(frozen=True)
class ModelIdentity:
    """Everything that changes a model's embeddings, as JSON-ready parts, and their hash.

    Attributes:
        digest: sha256 (hex) of the canonical JSON of ``parts``: the cache key space.
        parts: ``source`` (files and their sha256, a hub revision, or what a remote
            endpoint reports), ``settings`` and ``versions``.
    """

    digest: str
    parts: Mapping[str, Any]

    @classmethod
    def of(cls, parts: Mapping[str, Any]) -> ModelIdentity:
        """The identity of ``parts`` (JSON-ready)."""
        # default=str: a Path or another stray value counts by its text, as it always has.
        parts_json = json.loads(canonical_json(parts, default=str))
        return cls(json_digest(parts, default=str), parts_json)

    @property
    def short(self) -> str:
        """The first 12 hex digits, for tables and messages."""
        return self.digest[:12]

    def differences(self, other: ModelIdentity) -> list[str]:
        """The dotted paths of the parts that differ, e.g. ``settings.dtype``."""
        return sorted(_differences(self.parts, other.parts))


def _differences(a: Any, b: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b)):
            yield from _differences(a.get(key), b.get(key), f"{prefix}{key}.")
    elif a != b:
        yield prefix.rstrip(".") or "(all)"


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries that compute embeddings (read, not imported)."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def model_identity(
    source: Mapping[str, Any], settings: Mapping[str, Any], *, versions: bool = True
) -> ModelIdentity:
    """The identity of a model's embeddings.

    Args:
        source: What the model is: :func:`folder_source`, :func:`hub_source`, or a
            backend's own description (the lexical baseline, a remote endpoint).
        settings: How pytest-niah runs it (device type, dtype, window, prompts, kwargs).
        versions: Include :func:`library_versions` (off for models no library computes).
    """
    parts: dict[str, Any] = {
        "schema": EMBEDDING_SCHEMA,
        "source": dict(source),
        "settings": dict(settings),
    }
    if versions:
        parts["versions"] = library_versions()
    return ModelIdentity.of(parts)


def folder_source(folder: Path, memo_dir: Path | None = None) -> dict[str, Any]:
    """A model folder by content: every file's sha256, or the hub commit of a hub snapshot."""
    hub = hub_source(folder)
    if hub is not None:
        return hub
    return {"kind": "files", "files": file_digests(folder, memo_dir)}


def hub_source(folder: Path) -> dict[str, Any] | None:
    """``{"kind": "hub", "repo", "revision"}`` when ``folder`` is a hub cache snapshot.

    A folder inside a snapshot (one of several models in a repository) adds ``subfolder``.
    """
    match = _HUB_SNAPSHOT.search(Path(folder).as_posix())
    if match is None:
        return None
    source = {
        "kind": "hub",
        "repo": f"{match['org']}/{match['name']}",
        "revision": match["rev"],
    }
    if match["sub"]:
        source["subfolder"] = match["sub"]
    return source


def cached_hub_folder(name: str) -> Path | None:
    """The hub cache snapshot of model ``name`` if it is cached (no network), else ``None``."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
        return None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:
        return None


def file_digests(folder: Path, memo_dir: Path | None = None) -> dict[str, str]:
    """sha256 of every regular file below ``folder`` (hidden ones skipped), by relative path.

    Hashes are memoised by (absolute path, size, mtime_ns) in ``memo_dir``/file-hashes.sqlite
    when ``memo_dir`` is given and writable.
    """
    files = sorted(
        path
        for path in Path(folder).rglob("*")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
    with _Memo(memo_dir) as memo:
        return {path.relative_to(folder).as_posix(): memo.digest(path) for path in files}


class _Memo:
    """Remembered file hashes; a memo that cannot be opened or written just isn't used."""

    def __init__(self, folder: Path | None) -> None:
        self._conn: sqlite3.Connection | None = None
        if folder is None:
            return
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(Path(folder) / MEMO_FILE, timeout=30)
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS hashes (path TEXT, size INTEGER, mtime_ns INTEGER, "
                "sha256 TEXT NOT NULL, PRIMARY KEY (path, size, mtime_ns))"
            )
        except (OSError, sqlite3.Error):
            self._conn = None

    def __enter__(self) -> _Memo:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._conn is not None:
            self._conn.close()

    def digest(self, path: Path) -> str:
        real = os.path.realpath(path)
        stat = os.stat(real)
        key = (real, stat.st_size, stat.st_mtime_ns)
        if self._conn is not None:
            try:
                row = self._conn.execute(
                    "SELECT sha256 FROM hashes WHERE path=? AND size=? AND mtime_ns=?", key
                ).fetchone()
            except sqlite3.Error:
                row = None
            if row is not None:
                return str(row[0])
        digest = _sha256(real)
        if self._conn is not None and time.time_ns() - stat.st_mtime_ns > _SETTLED_NS:
            try:
                with self._conn:
                    self._conn.execute(
                        "INSERT OR REPLACE INTO hashes VALUES (?, ?, ?, ?)", (*key, digest)
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
