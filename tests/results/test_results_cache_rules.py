"""experiment/results_cache.py: a cache that cannot take a run warns (#46.4 mutation draw)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from pytest_niah.errors import NiahCacheWarning
from pytest_niah.experiment.results_cache import keep_results


class Unsaveable:
    """Results whose save fails as a full or read-only cache folder makes it fail."""

    def save(self, path: Path, *, inside: Path) -> None:
        raise OSError(errno.EROFS, "Read-only file system")


def test_a_cache_that_cannot_store_the_results_warns_and_the_run_goes_on(tmp_path: Path):
    # Found (mutation seed 1954973815, results_cache.py:60 the warning deleted): the run
    # lost its shortcut silently; it must say so, and why, and not fail.
    target = tmp_path / "results" / "key.json"
    with pytest.warns(NiahCacheWarning, match=r"cannot store this run \(Read-only file system\)"):
        keep_results(Unsaveable(), target)  # type: ignore[arg-type]
