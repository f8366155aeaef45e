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


def test_results_under_the_key_are_reused_only_for_the_same_config_and_the_same_model(
    one_group_config, tmp_path: Path
):
    # Found (mutation sweep, results_cache.py:49 `or` -> `and`): results of another model
    # with this run's config, left under this key, were taken for this run's.
    from pytest_niah import run_experiment
    from pytest_niah.experiment.results_cache import cached_results

    config = one_group_config
    results = run_experiment(config, use_cache=False, progress=False)
    path = tmp_path / "key.json"
    results.save(path, inside=tmp_path)
    model = results.model.fingerprint
    assert cached_results(path, config, model) is not None
    assert cached_results(path, config, "another model's digest") is None
    assert cached_results(path, config.replace(seed=config.seed + 1), model) is None
    assert cached_results(tmp_path / "missing.json", config, model) is None
