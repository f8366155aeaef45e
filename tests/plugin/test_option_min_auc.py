"""--niah-min-auc: one gate test per arm and length fails when the AUC falls short.

The lexical baseline finds every literal needle (AUC near 1) and none of the one-hop ones
(AUC near chance, with a zero-width interval: each question's scores barely move).
"""

from __future__ import annotations

import math

import pytest

from pytest_niah.measure.resolve_advice import MDE_Z


def auc_message(results, arm: str, length: int, threshold: str, state: str) -> str:
    """The gate's line, with the numbers of the results file."""
    interval = results.interval(arm, length, "auc", "whole")
    return (
        f"--niah-min-auc: AUC {interval.point:.3f} [{interval.low:.3f}, {interval.high:.3f}], "
        f"threshold {threshold}; MDE {MDE_Z * interval.se:.3f} at {interval.groups} groups: {state}"
    )


def test_failing_gate_names_model_length_metric_value_threshold(niah):
    result = niah.run("--niah-min-auc=0.9", "--niah-json=r.json")
    results = niah.load("r.json")
    for length in (128, 256):
        assert results.interval("literal", length, "auc", "whole").low >= 0.9
        assert results.interval("onehop", length, "auc", "whole").high < 0.9
    result.assert_outcomes(passed=niah.n_cases // 2 + 2, failed=2, xfailed=niah.n_cases // 2)
    failures = niah.gate_failures(result)
    assert sorted(failures) == ["gate-onehop-L128", "gate-onehop-L256"]
    for length in (128, 256):
        message = auc_message(results, "onehop", length, "0.9", "below threshold")
        assert failures[f"gate-onehop-L{length}"] == [
            f"model lexical-tfidf, arm onehop, scoring whole, length {length}:",
            f"  {message}",
        ]
        # The summary shows the same line below the table, the gate column only the outcome.
        assert niah.details(result, "onehop")[length] == [("FAIL", message)]
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}
    assert niah.gates(result, "onehop") == {128: "FAIL", 256: "FAIL"}
    assert niah.details(result, "literal") == {}


def test_passing_gates(niah):
    result = niah.run("--niah-min-auc=0.9", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}


def test_threshold_is_inclusive(niah):
    """A threshold equal to the interval's low end (and the point) passes; a hair above not."""
    niah.run("--niah-arms=onehop", "--niah-lengths=128", "--niah-json=r.json")
    interval = niah.load("r.json").interval("onehop", 128, "auc", "whole")
    assert interval.low == interval.point == interval.high  # zero width: no inconclusive zone
    exact = niah.run("--niah-arms=onehop", "--niah-lengths=128", f"--niah-min-auc={interval.low!r}")
    assert exact.ret == pytest.ExitCode.OK
    assert niah.gates(exact, "onehop") == {128: "pass"}
    above = math.nextafter(interval.low, 1.0)
    missed = niah.run("--niah-arms=onehop", "--niah-lengths=128", f"--niah-min-auc={above!r}")
    assert missed.ret == pytest.ExitCode.TESTS_FAILED
    assert niah.gates(missed, "onehop") == {128: "FAIL"}
    [(_, message)] = niah.details(missed, "onehop")[128]
    assert message.endswith(": below threshold")


def test_per_length_threshold_gates_only_that_length(niah):
    result = niah.run("--niah-min-auc=256=0.75", "--niah-json=r.json")
    result.assert_outcomes(passed=niah.n_cases // 2 + 3, failed=1, xfailed=niah.n_cases // 2)
    assert list(niah.gate_failures(result)) == ["gate-onehop-L256"]
    message = auc_message(niah.load("r.json"), "onehop", 256, "0.75", "below threshold")
    assert niah.gates(result, "onehop") == {128: "-", 256: "FAIL"}
    assert niah.details(result, "onehop") == {256: [("FAIL", message)]}
    assert niah.gates(result, "literal") == {128: "-", 256: "pass"}


def test_no_threshold_no_gate(niah):
    result = niah.run()
    assert result.ret == pytest.ExitCode.OK
    assert niah.gates(result, "onehop") == {128: "-", 256: "-"}
    assert niah.details(result, "onehop") == {}
