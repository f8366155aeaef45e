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

Which files of a folder count, and their hashes, are :mod:`pytest_niah.embed.model_files`'s
(memoised by :mod:`pytest_niah.embed.file_hashes`). Nothing here imports torch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_niah.digest import canonical_json
from pytest_niah.digest import digest as json_digest
from pytest_niah.embed.model_files import file_digests

# Bump when pytest-niah changes how it turns a text into a vector (inputs, pooling, casting).
EMBEDDING_SCHEMA = 2
# The libraries that compute embeddings: part of every identity, and of a run's versions.
LIBRARIES = ("torch", "transformers", "sentence-transformers", "tokenizers", "model2vec")
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
