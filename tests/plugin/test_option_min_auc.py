"""--niah-min-auc: one gate test per arm and length fails when the AUC falls short."""

from __future__ import annotations

import pytest


def test_failing_gate_names_model_length_metric_value_threshold(niah):
    result = niah.run("--niah-min-auc=0.9")
    # The lexical baseline: literal AUC 1.0 (passes), one-hop AUC 0.5 (chance, fails).
    result.assert_outcomes(passed=niah.n_cases // 2 + 2, failed=2, xfailed=niah.n_cases // 2)
    result.stdout.fnmatch_lines(
        [
            "*model lexical-tfidf, arm onehop*length 128: AUC 0.500 < 0.9.*--niah-json=FILE*",
            "*model lexical-tfidf, arm onehop*length 256: AUC 0.500 < 0.9.*",
        ]
    )
    failed = {r.nodeid.rsplit("[", 1)[1] for r in result.reprec.getfailures()}
    assert failed == {"gate-onehop-L128]", "gate-onehop-L256]"}
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}
    assert niah.gates(result, "onehop") == {
        128: "FAIL: AUC 0.500 < 0.9",
        256: "FAIL: AUC 0.500 < 0.9",
    }


def test_passing_gates(niah):
    result = niah.run("--niah-min-auc=0.9", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}


def test_threshold_is_inclusive(niah):
    result = niah.run("--niah-min-auc=0.5")
    result.assert_outcomes(passed=niah.n_cases // 2 + 4, xfailed=niah.n_cases // 2)
    assert niah.gates(result, "onehop") == {128: "pass", 256: "pass"}


def test_per_length_threshold_gates_only_that_length(niah):
    result = niah.run("--niah-min-auc=256=0.75")
    result.assert_outcomes(passed=niah.n_cases // 2 + 3, failed=1, xfailed=niah.n_cases // 2)
    result.stdout.fnmatch_lines(["*model lexical-tfidf, arm onehop*length 256: AUC 0.500 < 0.75*"])
    assert niah.gates(result, "onehop") == {128: "-", 256: "FAIL: AUC 0.500 < 0.75"}


def test_no_threshold_no_gate(niah):
    result = niah.run()
    assert result.ret == pytest.ExitCode.OK
    assert niah.gates(result, "onehop") == {128: "-", 256: "-"}
