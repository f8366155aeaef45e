"""The comparison headline's window phrase (``window_change``), said only where both measured."""

from __future__ import annotations

import pytest

from pytest_niah.results.compare import window_change
from pytest_niah.results.results_schema import ModelInfo, WindowProbe


def info(measured: int | None, probed: int | None = 512, declared: int | None = 254) -> ModelInfo:
    probe = None if probed is None else WindowProbe(declared=declared, probed=probed, note="n")
    return ModelInfo(
        name="m", fingerprint="f", max_tokens=declared, measured_window=measured, window_probe=probe
    )


def test_two_runs_that_measured_different_windows_say_both():
    phrase = window_change(info(128), info(254))
    assert phrase == (
        "the two runs measured different windows: this run's model reads 128 tokens, "
        "the baseline's 254 tokens"
    )


def test_a_run_with_no_limit_within_its_probe_reads_every_token_of_it():
    phrase = window_change(info(None, probed=2048), info(1000))
    assert "this run's model reads every token of 2,048" in phrase
    assert "the baseline's 1,000 tokens" in phrase


def test_the_same_measured_window_says_nothing():
    assert window_change(info(200), info(200)) == ""
    assert window_change(info(None), info(None)) == ""


@pytest.mark.parametrize(
    ("current", "baseline"),
    [
        (info(128, probed=None), info(254)),  # this run from before the probe
        (info(128), info(254, probed=None)),  # the baseline from before the probe
        (info(None, probed=None), info(None, probed=None)),
    ],
    ids=["current-unmeasured", "baseline-unmeasured", "neither"],
)
def test_a_run_that_was_not_measured_says_nothing(current, baseline):
    assert window_change(current, baseline) == ""


@pytest.mark.parametrize("side", ["current", "baseline"])
def test_a_probe_that_probed_nothing_says_nothing(side):
    empty = info(None, probed=0)
    pair = (empty, info(254)) if side == "current" else (info(254), empty)
    assert window_change(*pair) == ""
