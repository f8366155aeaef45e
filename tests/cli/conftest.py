"""Shared fixtures of the command-line tests: one saved lexical run, no CI step summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.results.niah_results import NiahResults


@pytest.fixture(scope="session")
def results(shared_corpus_dir: Path) -> NiahResults:
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128, 512),
        positions=3,
        arms=("onehop", "literal"),
        bootstrap=50,
        groups=("dietary", "location"),
    )
    return run_experiment(config, progress=False)


@pytest.fixture(scope="session")
def results_file(results: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return results.save(tmp_path_factory.mktemp("results") / "lexical.json")


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
