"""Which caches a run reads and writes, and where: decided once, used by every kind of run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pytest_niah.config import paths
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.files import link_refused

RESULTS_FOLDER = "results"
# What runs write under the cache root (each module names its own; a test checks they are
# here): the embedding store and the file-hash memo (with their -wal, -shm and .lock
# files), finished results, server fingerprints, sentence token counts, downloaded books.
OWN_ENTRIES = (
    CACHE_FILE,
    "file-hashes.sqlite",
    RESULTS_FOLDER,
    "servers",
    "sentence-counts",
    "gutenberg",
)


@dataclass(frozen=True)
class CachePolicy:
    """The caches of a run: where they live and whether they are used at all.

    Downloaded books are inputs, not shortcuts: they are kept under the root whenever there
    is one. Everything else under it (embeddings, finished results, sentence token counts,
    model file hashes) is a cache of work, read and written only when ``enabled``; with
    ``--niah-no-cache`` a run writes none of it, sharded or not.

    Attributes:
        root: The cache root, or ``None``: nothing is kept (books go to their default folder).
        enabled: Whether the caches of work are read and written.
    """

    root: Path | None = None
    enabled: bool = True

    @classmethod
    def resolve(cls, cache_dir: str | Path | None, use_cache: bool = True) -> CachePolicy:
        """The policy of the API's ``cache_dir`` and ``use_cache``: the one rule for both.

        ``None`` (or an empty ``--niah-cache-dir``) is the default root, ``$NIAH_CACHE_DIR``
        else the user cache folder, for every kind of run; ``use_cache=False`` is no cache.
        """
        return cls(paths.cache_root(cache_dir or None), use_cache)

    @classmethod
    def from_options(cls, cache_dir: str, no_cache: bool) -> CachePolicy:
        """The policy of ``--niah-cache-dir`` (empty: the default root) and ``--niah-no-cache``."""
        return cls.resolve(cache_dir, not no_cache)

    @property
    def books(self) -> Path | None:
        """The root under which downloaded books are kept (cache or not)."""
        return self.root

    @property
    def work(self) -> Path | None:
        """The root of the caches of work, or ``None`` when they are off."""
        return self.root if self.enabled else None

    @property
    def embeddings(self) -> Path | None:
        """The embedding store's file, or ``None``."""
        return self.work / CACHE_FILE if self.work is not None else None

    @property
    def results(self) -> Path | None:
        """The folder of finished results, or ``None``."""
        return self.work / RESULTS_FOLDER if self.work is not None else None

    @property
    def sentence_counts(self) -> Path | None:
        """The root the haystack builder keeps sentence token counts under, or ``None``."""
        return self.work

    @property
    def model_hashes(self) -> Path | None:
        """The root model file hashes are memoised under, or ``None``."""
        return self.work

    def check_links(self) -> None:
        """Refuse a symbolic link anywhere among what runs write under the root.

        Checked before a run does any work: a link planted in a shared or restored cache
        would make the run replace the file it points to.

        Raises:
            LinkRefused: the first link found, named, with the fix.
        """
        root = self.root
        if root is None or not root.is_dir():
            return
        for entry in sorted(root.iterdir()):
            if not entry.name.startswith(OWN_ENTRIES):
                continue
            if entry.is_symlink():
                raise link_refused(entry, root)
            for folder, names, files in os.walk(entry):
                for name in sorted([*names, *files]):
                    if Path(folder, name).is_symlink():
                        raise link_refused(Path(folder, name), root)
