"""--niah-arms: the one-hop arm (the benchmark) and the literal diagnostic arm."""

from __future__ import annotations

import pytest


def test_literal_arm_only(niah):
    result = niah.run("--collect-only", "-q", "--niah-arms=literal")
    ids = niah.ids(result)
    assert len(ids) == niah.n_cases // 2 + niah.n_gates // 2
    assert all("-literal-" in i for i in ids if not i.startswith("gate-"))
    assert [i for i in ids if i.startswith("gate-")] == ["gate-literal-L128", "gate-literal-L256"]


def test_default_arm_is_onehop(niah):
    result = niah.run("--collect-only", "-q", omit=["arms"])
    ids = niah.ids(result)
    assert ids
    assert all("-onehop-" in i or i.startswith("gate-onehop-") for i in ids)


def test_both_arms_run_with_one_table_each(niah):
    result = niah.run()
    # The TF-IDF baseline sees the literal needles (shared words) and misses the one-hop ones.
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    tables = niah.tables(result)
    assert list(tables) == ["literal", "onehop"]
    for length in (128, 256):
        assert tables["literal"]["rows"][length]["found"] == "12"
        assert tables["literal"]["rows"][length]["missed"] == "0"
        assert tables["onehop"]["rows"][length]["found"] == "0"
        assert tables["onehop"]["rows"][length]["missed"] == "12"


def test_literal_arm_passes_with_the_lexical_baseline(niah):
    result = niah.run("--niah-arms=literal")
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates // 2)
    assert result.ret == pytest.ExitCode.OK
    assert list(niah.tables(result)) == ["literal"]


def test_onehop_arm_alone_scores_the_lexical_baseline_at_chance(niah):
    """No question word in any document: the TF-IDF query is empty and scores 0, a miss."""
    result = niah.run("--niah-arms=onehop")
    result.assert_outcomes(passed=niah.n_gates // 2, xfailed=niah.n_cases // 2)
    assert "invalid data" not in result.stdout.str()
    rows = niah.tables(result)["onehop"]["rows"]
    assert {rows[n]["ratio"] for n in rows} == {"0.500"}
