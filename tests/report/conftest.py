"""Shared results for the report tests: one small lexical run, and a worse copy of it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.results.niah_results import NiahResults


def _small_config(corpus: Path, **changes: object) -> NiahConfig:
    base = NiahConfig(
        model="lexical:tfidf",
        corpus=str(corpus),
        lengths=(128, 512),
        positions=3,
        arms=("onehop", "literal"),
        scoring=("whole", "chunk-max"),
        bootstrap=50,
        groups=("dietary", "location"),
    )
    return base.replace(**changes)


@pytest.fixture(scope="session")
def small_config(shared_corpus_dir: Path) -> Callable[..., NiahConfig]:
    """The small grid on the shared corpus; keyword arguments change fields of it."""
    return partial(_small_config, shared_corpus_dir)


@pytest.fixture(scope="session")
def results(small_config: Callable[..., NiahConfig]) -> NiahResults:
    """Real lexical results: 2 lengths, 3 positions, 2 arms, 2 scorings, 2 needle groups."""
    return run_experiment(small_config(), speed=True)  # the report shows every figure


@pytest.fixture(scope="session")
def worse(results: NiahResults) -> NiahResults:
    """The same run with every 512-token haystack scoring 3% lower: a clear regression."""
    cases = tuple(
        dataclasses.replace(c, cos_qh=c.cos_qh * 0.97) if c.length == 512 else c
        for c in results.cases
    )
    return dataclasses.replace(results, cases=cases)
