"""What a run says it did, and what keys its results (#43 item 3).

Every run that reuses results says so in one line with what it checked, every run ends
with the "N texts embedded, M read from the cache" line (on a terminal's bar too), a pure
transport option (a timeout) keys nothing, and a window that was not measured says why on
its title line.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import RunReport, run_experiment
from pytest_niah.progress import ConsoleProgress
from pytest_niah.report.measured_window import measured_suffix
from pytest_niah.report.terminal_tables import title
from pytest_niah.results.results_schema import WindowProbe


def small(**changes: object) -> NiahConfig:
    return NiahConfig(
        model="packaged-static",
        lengths=(128,),
        positions=2,
        groups=("location-01",),
        arms=("literal",),
        bootstrap=0,
        **changes,
    )


def run(config: NiahConfig, cache: Path, progress: object = False) -> tuple[object, RunReport]:
    report = RunReport()
    results = run_experiment(config, cache_dir=cache, progress=progress, report=report)  # type: ignore[arg-type]
    return results, report


@pytest.mark.integration
def test_transport_options_key_no_results(tmp_path: Path):
    # Found (#43): --niah-remote-timeout and --niah-remote-concurrency were part of the
    # results key: an identical run with another timeout embedded everything again.
    config = small()
    _, first = run(config, tmp_path)
    other = config.replace(remote_timeout=7.5, remote_concurrency=1, api_key_env="OTHER_KEY")
    assert other.fingerprint() == config.fingerprint()  # the shared results file's name
    results, report = run(other, tmp_path)
    assert not first.reused and report.reused
    assert results.config == other  # the reused results carry this run's options
    _, report = run(config.replace(positions=3), tmp_path)
    assert not report.reused  # a real option still keys them


@pytest.mark.integration
def test_the_api_says_what_a_reused_run_checked_and_embedded(tmp_path: Path, capsys):
    # Found (#43): the API's reuse line named the file only, and said nothing of what was
    # embedded; the embedding's own end line says it for a run that embeds.
    run(small(), tmp_path, progress=True)
    first = capsys.readouterr().err
    assert "texts embedded, 0 read from the cache" in first
    run(small(), tmp_path, progress=True)
    again = capsys.readouterr().err
    assert "results reused from an identical earlier run" in again
    assert "checked the sha256 of the model's" in again
    assert "; 0 texts embedded, 0 read from the cache" in again


def test_a_bar_still_ends_with_what_the_phase_did():
    # Found (#43): on a terminal the bar closed and the "N texts embedded, M read from the
    # cache" note of the embedding's end was dropped: no run on a terminal printed it.
    stream = io.StringIO()
    progress = ConsoleProgress(stream, bars=True, period=3600)
    progress.start("building and embedding haystacks", 2, "blocks")
    progress.advance(2, 100)
    progress.finish("41 texts embedded, 0 read from the cache")
    progress.stop()
    last = stream.getvalue().rstrip().splitlines()[-1]
    assert last.endswith(
        "building and embedding haystacks: 41 texts embedded, 0 read from the cache"
    )


@pytest.mark.integration
def test_a_window_not_measured_says_why_on_its_title(tmp_path: Path):
    # Found (#43): the title said "(declared; not measured)" and the reason was only in the
    # JSON (window_probe.note).
    results, _ = run(small(), tmp_path)
    probe = WindowProbe(
        declared=254, probed=0, note="not measured: the server is not deterministic"
    )
    model = results.model.model_copy(  # type: ignore[attr-defined]
        update={"max_tokens": 254, "measured_window": None, "window_probe": probe}
    )
    unmeasured = dataclasses.replace(results, model=model)  # type: ignore[type-var]
    why = " (declared; not measured: the server is not deterministic)"
    assert measured_suffix(model) == why
    assert f"reads 254 tokens{why}" in title("m", unmeasured, "literal")
    bare = model.model_copy(update={"window_probe": WindowProbe(declared=254, probed=0, note="")})
    assert measured_suffix(bare) == " (declared; not measured)"
