"""The identity of an embedding: everything that changes its bits, and one hash of it.

One function, :func:`model_identity`, computes it; the embedding cache, the results cache,
the results file, snapshots and comparisons all use it. It covers

- the model's content: the sha256 of every file of a local (or packaged) model folder (a
  hidden file counts where the model's own JSON config names it), or the commit of a model
  from the Hugging Face hub cache -- only where the folder is one: every file a link into
  the repository's own ``blobs/``, as the hub writes it, not a folder that merely sits at a
  path shaped like a snapshot; never the folder's path, so the same weights copied
  elsewhere hit the cache;
- what pytest-niah does with it: device type and dtype, the window, prompts, model and
  encode keyword arguments;
- the versions of the libraries that compute it (torch, transformers, sentence-transformers,
  tokenizers, model2vec).

File hashes are streamed, and memoised on (path, inode, size, mtime_ns, ctime_ns) in a small
SQLite file beside the caches, so a warm run does not re-read gigabytes; an edit that puts
back the size and modification time still moves the inode change time, which no program can
set, so it is read again. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_niah.digest import canonical_json
from pytest_niah.digest import digest as json_digest

# Bump when pytest-niah changes how it turns a text into a vector (inputs, pooling, casting).
EMBEDDING_SCHEMA = 2
# The libraries that compute embeddings: part of every identity, and of a run's versions.
LIBRARIES = ("torch", "transformers", "sentence-transformers", "tokenizers", "model2vec")
MEMO_FILE = "file-hashes.sqlite"
MEMO_TABLE = "file_hashes"  # keyed on the inode and ctime too (the table "hashes" was not)
# The largest JSON file read for the hidden paths a model's config names (configs are small;
# a tokenizer.json of many megabytes names none).
MAX_CONFIG_BYTES = 1 << 20
# Vocabularies: large, and never naming a file (their strings are tokens).
VOCABULARY_FILES = frozenset({"tokenizer.json", "vocab.json"})
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


def installed_versions(names: Iterable[str]) -> dict[str, str]:
    """Installed versions of some packages, by name; those not installed are left out.

    Read from the packages' metadata, never imported.
    """
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries that compute embeddings (:data:`LIBRARIES`)."""
    return installed_versions(LIBRARIES)


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
    The path alone is not enough: every file the folder holds must be a link into the
    repository's own ``blobs/`` folder, as the hub cache writes it (see :func:`is_hub_written`).
    """
    match = _HUB_SNAPSHOT.search(Path(folder).as_posix())
    if match is None or not is_hub_written(Path(folder), match["rev"]):
        return None
    source = {
        "kind": "hub",
        "repo": f"{match['org']}/{match['name']}",
        "revision": match["rev"],
    }
    if match["sub"]:
        source["subfolder"] = match["sub"]
    return source


def is_hub_written(folder: Path, revision: str) -> bool:
    """Every file below ``folder`` (hidden ones too) is a link into ``.../models--ORG--NAME/blobs``.

    That is how the hub cache stores a snapshot: the commit names the content. A folder at a
    path of that shape holding its own files (copied, edited, or replacing a link) is
    identified by its files instead.
    """
    text = folder.as_posix()
    snapshots = Path(text[: text.index(f"/snapshots/{revision}")])
    try:
        blobs = (snapshots / "blobs").resolve(strict=True)
        entries = [path for path in folder.rglob("*") if not path.is_dir()]
        return bool(entries) and all(
            path.is_symlink() and path.resolve(strict=True).parent == blobs for path in entries
        )
    except (OSError, RuntimeError):  # a missing blob, a link loop
        return False


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
    """sha256 of every regular file below ``folder``, by relative path.

    Hidden files are skipped (``.git``, download metadata, editor backups), except those the
    model's own JSON config names (see :func:`named_hidden_paths`): the loader reads them.
    Hashes are memoised by (absolute path, inode, size, mtime_ns, ctime_ns) in
    ``memo_dir``/file-hashes.sqlite when ``memo_dir`` is given and writable.
    """
    folder = Path(folder)
    named = named_hidden_paths(folder)
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and (not _is_hidden(path, folder) or _under_any(path, named))
    )
    with _Memo(memo_dir) as memo:
        return {path.relative_to(folder).as_posix(): memo.digest(path) for path in files}


def named_hidden_paths(folder: Path) -> set[Path]:
    """The hidden files and folders below ``folder`` that its JSON files name.

    sentence-transformers reads a module from the folder ``modules.json`` gives as its
    ``path``, and a config may point to another file of the folder: if that is a hidden one
    (``.pooling``), it is as much the model as ``1_Pooling``. Every string of every JSON file
    of up to ``MAX_CONFIG_BYTES`` (hidden ones and vocabularies skipped) that names an
    existing hidden path inside the folder counts.
    """
    named: set[Path] = set()
    root = folder.resolve()
    for config in folder.rglob("*.json"):
        if config.name in VOCABULARY_FILES or _is_hidden(config, folder) or not config.is_file():
            continue
        try:
            if config.stat().st_size > MAX_CONFIG_BYTES:
                continue
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for text in _strings(data):
            relative = text.strip().removeprefix("./")
            if not any(p.startswith(".") and p not in (".", "..") for p in relative.split("/")):
                continue  # names no hidden path (most strings: a vocabulary's tokens)
            for base in {folder, config.parent}:
                target = base / relative
                try:
                    if target.exists() and target.resolve().is_relative_to(root):
                        named.add(target)
                except (OSError, RuntimeError, ValueError):  # a loop, a NUL byte
                    continue
    return named


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        if data and "\n" not in data and len(data) < 256:
            yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)


def _is_hidden(path: Path, folder: Path) -> bool:
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return False
    return any(part.startswith(".") and part not in (".", "..") for part in parts)


def _under_any(path: Path, roots: set[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


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
                f"CREATE TABLE IF NOT EXISTS {MEMO_TABLE} (path TEXT, inode INTEGER, "
                "size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, sha256 TEXT NOT NULL, "
                "PRIMARY KEY (path, inode, size, mtime_ns, ctime_ns))"
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
