"""--niah-min-ratio: a gate on the comparative ratio (needle haystack beats its control)."""

from __future__ import annotations

import pytest


def test_single_value_fails_the_chance_level_arm(niah):
    result = niah.run("--niah-min-ratio=0.7")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2, failed=2, xfailed=niah.n_cases // 2)
    result.stdout.fnmatch_lines(
        [
            "*model lexical-tfidf, arm onehop*length 128: comparative ratio 0.500 < 0.7.*",
            "*model lexical-tfidf, arm onehop*length 256: comparative ratio 0.500 < 0.7.*",
        ]
    )
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}


def test_per_length_syntax(niah):
    result = niah.run("--niah-min-ratio=128=0.7,256=0.6")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2, failed=2, xfailed=niah.n_cases // 2)
    assert niah.gates(result, "onehop") == {
        128: "FAIL: comparative ratio 0.500 < 0.7",
        256: "FAIL: comparative ratio 0.500 < 0.6",
    }
    result.stdout.fnmatch_lines(["*arm onehop*length 256: comparative ratio 0.500 < 0.6.*"])


def test_default_with_a_per_length_override(niah):
    result = niah.run("--niah-min-ratio=0.4,128=0.7")
    result.assert_outcomes(passed=niah.n_cases // 2 + 3, failed=1, xfailed=niah.n_cases // 2)
    assert niah.gates(result, "onehop") == {128: "FAIL: comparative ratio 0.500 < 0.7", 256: "pass"}


def test_per_length_leaves_other_lengths_ungated(niah):
    result = niah.run("--niah-min-ratio=128=0.9", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    assert niah.gates(result, "literal") == {128: "pass", 256: "-"}


def test_both_gates_together_list_both_failures(niah):
    result = niah.run("--niah-min-ratio=0.7", "--niah-min-auc=0.6", "--niah-lengths=128")
    result.assert_outcomes(passed=niah.n_cases // 4 + 1, failed=1, xfailed=niah.n_cases // 4)
    result.stdout.fnmatch_lines(
        ["*arm onehop*length 128: AUC 0.500 < 0.6; comparative ratio 0.500 < 0.7.*"]
    )


def test_passing_gates(niah):
    result = niah.run("--niah-min-ratio=1", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
