"""--niah-min-ratio: a gate on the comparative ratio (needle haystack beats its control).

The lexical baseline: every literal needle haystack outscores its control (ratio 1, interval
[1, 1]); no one-hop one does better than a tie (ratio 0.5, interval [0.5, 0.5]).
"""

from __future__ import annotations

import pytest


def ratio_message(threshold: str, state: str = "below threshold") -> str:
    """The gate line of the one-hop arm, whose ratio is exactly 0.5 at every length."""
    return (
        f"--niah-min-ratio: comparative ratio 0.500 [0.500, 0.500], threshold {threshold}; "
        f"MDE 0.000 at 2 groups: {state}"
    )


def test_single_value_fails_the_chance_level_arm(niah):
    result = niah.run("--niah-min-ratio=0.7")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2, failed=2, xfailed=niah.n_cases // 2)
    failures = niah.gate_failures(result)
    assert failures == {
        f"gate-onehop-L{n}": [
            f"model lexical-tfidf, arm onehop, scoring whole, length {n}:",
            f"  {ratio_message('0.7')}",
        ]
        for n in (128, 256)
    }
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}
    assert niah.gates(result, "onehop") == {128: "FAIL", 256: "FAIL"}


def test_per_length_syntax(niah):
    result = niah.run("--niah-min-ratio=128=0.7,256=0.6")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2, failed=2, xfailed=niah.n_cases // 2)
    assert niah.gates(result, "onehop") == {128: "FAIL", 256: "FAIL"}
    assert niah.details(result, "onehop") == {
        128: [("FAIL", ratio_message("0.7"))],
        256: [("FAIL", ratio_message("0.6"))],
    }


def test_default_with_a_per_length_override(niah):
    result = niah.run("--niah-min-ratio=0.4,128=0.7")
    result.assert_outcomes(passed=niah.n_cases // 2 + 3, failed=1, xfailed=niah.n_cases // 2)
    assert niah.gates(result, "onehop") == {128: "FAIL", 256: "pass"}
    assert niah.details(result, "onehop") == {128: [("FAIL", ratio_message("0.7"))]}


def test_per_length_leaves_other_lengths_ungated(niah):
    result = niah.run("--niah-min-ratio=128=0.9", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    assert niah.gates(result, "literal") == {128: "pass", 256: "-"}


def test_both_gates_together_list_both_failures(niah):
    result = niah.run(
        "--niah-min-ratio=0.7", "--niah-min-auc=0.6", "--niah-lengths=128", "--niah-json=r.json"
    )
    result.assert_outcomes(passed=niah.n_cases // 4 + 1, failed=1, xfailed=niah.n_cases // 4)
    auc = niah.load("r.json").row("onehop", 128).auc
    assert auc < 0.6
    [failure] = niah.gate_failures(result).values()
    # One failure, one line per gate: AUC first, then the ratio.
    assert failure[0] == "model lexical-tfidf, arm onehop, scoring whole, length 128:"
    assert failure[1].startswith(f"  --niah-min-auc: AUC {auc:.3f} [")
    assert failure[1].endswith("threshold 0.6; MDE 0.000 at 2 groups: below threshold")
    assert failure[2] == f"  {ratio_message('0.7')}"
    assert len(failure) == 3
    details = niah.details(result, "onehop")[128]
    assert details == [("FAIL", failure[1].strip()), ("FAIL", failure[2].strip())]


def test_passing_gates(niah):
    result = niah.run("--niah-min-ratio=1", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}
