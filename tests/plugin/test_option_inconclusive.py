"""--niah-inconclusive: what a gate does when the metric's 95% interval cannot tell.

A minimum gate (``--niah-min-auc``, ``--niah-min-ratio``) has three verdicts from the
metric's own bootstrap interval over needle groups: *meets threshold* (point and low end
reach it: the gate passes), *below threshold* (point and the whole interval below it: the
gate fails) and *inconclusive* (anything else). The policy decides only the inconclusive
case: ``auto`` (default) fails it when the point estimate is below the threshold and warns
otherwise, so it is never weaker than a gate on the point; ``fail``, ``warn`` and ``pass``
always do that.
"""

from __future__ import annotations

import re

import pytest

# The expanded questions let the TF-IDF baseline find needles with some spread over the 8
# groups, so AUC's bootstrap interval at 256 tokens is wide and lies on both sides of 0.9.
GRID = ("--niah-arms=expand100", "--niah-groups=dietary,location", "--niah-lengths=256")
ARM = "expand100"
WHERE = "model lexical-tfidf, arm expand100, scoring whole, length 256"
POLICIES = ("auto", "fail", "warn", "pass")
# The gate column of each policy, by where the threshold lies.
COLUMN = {
    # low end < threshold <= point: inconclusive, the point meets it.
    "between the low end and the point": {
        "auto": "warn",
        "fail": "FAIL",
        "warn": "warn",
        "pass": "pass",
    },
    # point < threshold <= high end: inconclusive, the point misses it.
    "between the point and the high end": {
        "auto": "FAIL",
        "fail": "FAIL",
        "warn": "warn",
        "pass": "pass",
    },
    # threshold <= low end: meets threshold, whatever the policy.
    "below the low end": dict.fromkeys(POLICIES, "pass"),
}


@pytest.fixture
def interval(niah):
    """AUC at 256 tokens and its interval, from a run without gates (the results are cached)."""
    result = niah.run(*GRID, "--niah-json=r.json")
    assert result.ret == pytest.ExitCode.OK
    row = niah.load("r.json").interval(ARM, 256, "auc", "whole")
    assert row is not None
    assert row.low + 0.02 < row.point < row.high - 0.02, "the grid must give a wide interval"
    return row


def threshold(interval, where: str) -> str:
    value = {
        "between the low end and the point": (interval.low + interval.point) / 2,
        "between the point and the high end": (interval.point + interval.high) / 2,
        "below the low end": interval.low - 0.01,
    }[where]
    return f"{value:.4f}"


def outcome_of(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k in ("passed", "failed")}


@pytest.mark.parametrize("where", list(COLUMN))
def test_each_policy_by_where_the_threshold_lies(niah, interval, where):
    limit = threshold(interval, where)
    cases = 8 * 2 * 3  # 8 groups x 2 orders x 3 positions, every needle found
    for policy in POLICIES:
        result = niah.run(*GRID, f"--niah-min-auc={limit}", f"--niah-inconclusive={policy}")
        column = COLUMN[where][policy]
        assert niah.gates(result, ARM) == {256: column}, (policy, result.stdout.str())
        details = niah.details(result, ARM)
        warned = "NiahGateWarning" in result.stdout.str()
        if column == "FAIL":
            assert result.ret == pytest.ExitCode.TESTS_FAILED, policy
            assert outcome_of(result) == {"passed": cases, "failed": 1}, policy
            assert [outcome for outcome, _ in details[256]] == ["FAIL"], policy
            failure = niah.gate_failures(result)["gate-expand100-L256"]
            assert failure[0] == f"{WHERE}:"
            assert failure[1].strip() == details[256][0][1]
            assert not warned
        elif column == "warn":
            assert result.ret == pytest.ExitCode.OK, policy
            assert outcome_of(result) == {"passed": cases + 1}, policy
            assert [outcome for outcome, _ in details[256]] == ["WARN"], policy
            # The warning names the gate and carries the same message.
            assert f"NiahGateWarning: {WHERE}: {details[256][0][1]}\n" in result.stdout.str()
        else:
            assert result.ret == pytest.ExitCode.OK, policy
            assert outcome_of(result) == {"passed": cases + 1}, policy
            assert details == {}, policy  # nothing to explain
            assert not warned
        if where != "below the low end" and details:
            message = details[256][0][1]
            # The numbers, the interval, the MDE, the verdict and how to resolve it.
            assert message.startswith(
                f"--niah-min-auc: AUC {interval.point:.3f} "
                f"[{interval.low:.3f}, {interval.high:.3f}], threshold {float(limit):g}; MDE "
            ), message
            assert re.search(r"; MDE \d\.\d{3} at 8 groups: inconclusive \(", message), message
            assert "needle groups (now 8) would resolve" in message


def test_default_policy_is_auto(niah, interval):
    limit = threshold(interval, "between the low end and the point")
    default = niah.run(*GRID, f"--niah-min-auc={limit}")
    auto = niah.run(*GRID, f"--niah-min-auc={limit}", "--niah-inconclusive=auto")
    assert niah.gates(default, ARM) == niah.gates(auto, ARM) == {256: "warn"}
    assert niah.details(default, ARM) == niah.details(auto, ARM)


def test_a_clear_miss_fails_under_every_policy(niah):
    """The one-hop arm of the baseline: ratio 0.5 with a zero-width interval, below 0.6."""
    for policy in POLICIES:
        result = niah.run(
            "--niah-arms=onehop", "--niah-min-ratio=0.6", f"--niah-inconclusive={policy}"
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED, policy
        assert niah.gates(result, "onehop") == {128: "FAIL", 256: "FAIL"}, policy
        for length in (128, 256):
            [(outcome, message)] = niah.details(result, "onehop")[length]
            assert outcome == "FAIL"
            assert message.startswith("--niah-min-ratio: comparative ratio 0.500 [0.500, 0.500]")
            assert message.endswith("threshold 0.6; MDE 0.000 at 2 groups: below threshold")


def test_a_threshold_met_by_the_whole_interval_passes_under_every_policy(niah):
    for policy in POLICIES:
        result = niah.run(
            "--niah-arms=onehop", "--niah-min-ratio=0.5", f"--niah-inconclusive={policy}"
        )
        assert result.ret == pytest.ExitCode.OK, policy
        assert niah.gates(result, "onehop") == {128: "pass", 256: "pass"}


def test_ini_policy_and_the_command_line_beats_it(niah, interval):
    limit = threshold(interval, "between the low end and the point")
    niah.pytester.makeini("[pytest]\nniah_inconclusive = fail\n")
    from_ini = niah.run(*GRID, f"--niah-min-auc={limit}")
    assert from_ini.ret == pytest.ExitCode.TESTS_FAILED
    assert niah.gates(from_ini, ARM) == {256: "FAIL"}
    from_cli = niah.run(*GRID, f"--niah-min-auc={limit}", "--niah-inconclusive=pass")
    assert from_cli.ret == pytest.ExitCode.OK
    assert niah.gates(from_cli, ARM) == {256: "pass"}


def test_without_intervals_a_gate_is_inconclusive_never_silently_passed(niah, interval):
    """No bootstrap: no interval, so even a threshold the point meets is not a pass."""
    limit = threshold(interval, "below the low end")
    result = niah.run(*GRID, f"--niah-min-auc={limit}", "--niah-bootstrap=0")
    assert result.ret == pytest.ExitCode.OK
    assert niah.gates(result, ARM) == {256: "warn"}
    [(outcome, message)] = niah.details(result, ARM)[256]
    assert outcome == "WARN"
    assert f"AUC {interval.point:.3f}, threshold {float(limit):g}: inconclusive" in message
    assert message.endswith(
        ": inconclusive (no interval: bootstrap off; turn the bootstrap on (--niah-bootstrap))"
    )
    # The point below the threshold fails, as a point gate would.
    above = f"{interval.point + 0.01:.4f}"
    failed = niah.run(*GRID, f"--niah-min-auc={above}", "--niah-bootstrap=0")
    assert failed.ret == pytest.ExitCode.TESTS_FAILED
    assert niah.gates(failed, ARM) == {256: "FAIL"}


def test_bad_value_is_a_usage_error(niah):
    result = niah.run("--collect-only", "--niah-inconclusive=maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--niah-inconclusive*maybe*"])


def test_gate_on_is_gone(niah):
    result = niah.run("--collect-only", "--niah-gate-on=lower")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --niah-gate-on=lower*"])
