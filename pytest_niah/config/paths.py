"""Where pytest-niah keeps things by default: its cache root, saved runs and snapshots."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "NIAH_CACHE_DIR"
APP_NAME = "pytest-niah"
ROOTDIR = "<rootdir>"  # how docs and --help show pytest's rootdir
CACHE_FILE = "embeddings.sqlite"  # the embedding store, under the cache root


def cache_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The cache root: ``explicit`` if given, else ``$NIAH_CACHE_DIR``, else the user cache.

    The embedding cache, the results cache and downloaded corpora live below it.
    """
    if explicit:
        return Path(explicit).expanduser()
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def store_dir(rootdir: Path | str) -> Path:
    """Where runs are saved by default: ``<rootdir>/.niah/runs``."""
    return Path(rootdir) / ".niah" / "runs"


def snapshot_dir(rootdir: Path | str) -> Path:
    """Where snapshots are kept by default: ``<rootdir>/__snapshots__/niah``."""
    return Path(rootdir) / "__snapshots__" / "niah"
