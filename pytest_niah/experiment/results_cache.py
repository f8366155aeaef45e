"""The results cache: a finished run kept under a hash of everything that determines it.

An identical re-run (same config, model identity, data and package versions) loads its
results from here and no model at all; results stored under a key but of another run, or
damaged, are computed again and replaced.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.paths import CACHE_ENV
from pytest_niah.digest import digest
from pytest_niah.embed.protocol import Embedder
from pytest_niah.errors import NiahCacheWarning, NiahError
from pytest_niah.experiment.run_inputs import Inputs
from pytest_niah.results.niah_results import NiahResults, package_versions
from pytest_niah.results.results_schema import RESULTS_SCHEMA_VERSION

WINDOW_PROBE_VERSION = 1


def results_key(config: NiahConfig, embedder: Embedder, inputs: Inputs) -> str:
    """A hash of everything results depend on: config, model identity, data, versions."""
    identity = {
        "schema": RESULTS_SCHEMA_VERSION,
        "window_probe": WINDOW_PROBE_VERSION,  # results before the probe are not reused
        "config": config.key_dict(),  # transport options (a timeout) change no result
        "model": embedder.identity.digest,
        "corpus": inputs.corpus.fingerprint(),
        "needles": inputs.needle_set.fingerprint(),
        "expansions": inputs.expansions.fingerprint() if inputs.expansions else None,
        "versions": package_versions(),
    }
    return digest(identity)


def cached_results(path: Path, config: NiahConfig, model: str) -> NiahResults | None:
    """The results stored under this run's key, if they are this run's: same config, model."""
    if not path.is_file():
        return None
    try:
        cached = NiahResults.load(path)
    except (NiahError, OSError):
        return None  # damaged or unreadable: compute again and replace it
    if cached.config.key_dict() != config.key_dict() or cached.model.fingerprint != model:
        return None  # another run's results copied or left under this key: not this run's
    return dataclasses.replace(cached, config=config)  # this run's transport options


def keep_results(results: NiahResults, results_file: Path) -> None:
    """Store finished results in the results cache; a cache that cannot take them warns."""
    try:
        results.save(results_file, inside=results_file.parent)
    except OSError as exc:
        # An unusable cache folder loses only the shortcut, never the results: warn, go on.
        warnings.warn(
            NiahCacheWarning(
                f"pytest-niah: the results cache {results_file.parent} cannot store this run "
                f"({exc.strerror or exc}), so a re-run will compute it again. Fix: make it "
                f"writable, or point the cache elsewhere (--niah-cache-dir or {CACHE_ENV})"
            ),
            stacklevel=3,
        )
