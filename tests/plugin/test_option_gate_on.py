"""--niah-gate-on: gate the metric itself (point) or the lower end of its 95% interval."""

from __future__ import annotations

import pytest

# The expanded questions let the TF-IDF baseline find needles with some spread over the 8
# groups, so AUC's bootstrap interval is wide at 256 tokens.
GRID = ("--niah-arms=expand100", "--niah-groups=dietary,location", "--niah-lengths=256")


@pytest.fixture
def interval(niah):
    """AUC at 256 tokens and its interval, from a run without gates."""
    result = niah.run(*GRID, "--niah-json=r.json")
    assert result.ret == pytest.ExitCode.OK
    results = niah.load("r.json")
    row = results.interval("expand100", 256, "auc", "whole")
    assert row is not None
    assert row.low < row.point, "the grid must give a wide interval for this test"
    return row


def test_a_threshold_between_bound_and_point_passes_with_point(niah, interval):
    threshold = (interval.low + interval.point) / 2
    result = niah.run(*GRID, f"--niah-min-auc={threshold:.4f}", "--niah-gate-on=point")
    assert result.ret == pytest.ExitCode.OK
    assert niah.gates(result, "expand100") == {256: "pass"}


def test_the_same_threshold_fails_with_lower(niah, interval):
    threshold = f"{(interval.low + interval.point) / 2:.4f}"
    result = niah.run(*GRID, f"--niah-min-auc={threshold}", "--niah-gate-on=lower")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # 8 groups x 2 orders x 3 positions, all found; the gate fails.
    result.assert_outcomes(failed=1, passed=8 * 2 * 3)
    message = f"AUC lower 95% bound {interval.low:.3f} < {float(threshold):g}"
    result.stdout.fnmatch_lines(
        [f"*model lexical-tfidf, arm expand100, scoring whole, length 256: {message}*"]
    )
    assert niah.gates(result, "expand100") == {256: f"FAIL: {message}"}


def test_lower_passes_below_the_bound(niah, interval):
    result = niah.run(*GRID, f"--niah-min-auc={interval.low - 0.01:.4f}", "--niah-gate-on=lower")
    assert result.ret == pytest.ExitCode.OK


def test_ini_gate_on(niah, interval):
    niah.pytester.makeini("[pytest]\nniah_gate_on = lower\n")
    threshold = (interval.low + interval.point) / 2
    result = niah.run(*GRID, f"--niah-min-auc={threshold:.4f}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*AUC lower 95% bound*"])
    # The command line beats the ini.
    point = niah.run(*GRID, f"--niah-min-auc={threshold:.4f}", "--niah-gate-on=point")
    assert point.ret == pytest.ExitCode.OK


def test_lower_gates_the_ratio_too(niah):
    """The one-hop arm of the baseline: ratio 0.5 with a zero-width interval at 128 tokens."""
    result = niah.run("--niah-arms=onehop", "--niah-min-ratio=0.5", "--niah-gate-on=lower")
    assert niah.gates(result, "onehop")[128] == "pass"
    result = niah.run("--niah-arms=onehop", "--niah-min-ratio=0.51", "--niah-gate-on=lower")
    assert (
        niah.gates(result, "onehop")[128] == "FAIL: comparative ratio lower 95% bound 0.500 < 0.51"
    )


def test_bad_value_is_a_usage_error(niah):
    result = niah.run("--collect-only", "--niah-gate-on=upper")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--niah-gate-on*upper*"])


def test_lower_without_intervals_does_not_silently_gate_the_point(niah, interval):
    threshold = (interval.low + interval.point) / 2
    result = niah.run(
        *GRID, f"--niah-min-auc={threshold:.4f}", "--niah-gate-on=lower", "--niah-bootstrap=0"
    )
    assert result.ret != pytest.ExitCode.OK
    assert "bootstrap" in result.stdout.str() + result.stderr.str()
