"""The terminal summary: a pytest-niah section per model, a table per arm, a row per length."""

from __future__ import annotations

import math
import re

HEADER = [
    "length",
    "norm.sim",
    "ratio",
    "AUC",
    "separation",
    "effect",
    "found",
    "missed",
    "truncated",
    "gate",
]


def test_section_title_table_and_rows(niah):
    result = niah.run()
    assert niah.sections(result) == ["lexical-tfidf"]
    result.stdout.re_match_lines([r"=+ pytest-niah: lexical-tfidf =+$"])
    tables = niah.tables(result)
    assert list(tables) == ["literal", "onehop"]
    for arm, table in tables.items():
        assert table["title"].startswith(f"lexical-tfidf (lexical:tfidf), arm {arm}")
        header = table["header"]
        assert header[0] == "length"
        assert header[-1] == "gate"
        assert set(HEADER) <= set(header)
        assert list(table["rows"]) == [128, 256]
        assert {row["gate"] for row in table["rows"].values()} == {"-"}
    assert tables["literal"]["rows"][128]["ratio"] == "1.000"
    assert tables["onehop"]["rows"][256]["AUC"].split()[0] == "0.500"


def test_summary_comes_after_the_test_results(niah):
    result = niah.run("--niah-arms=literal", "--niah-lengths=128")
    lines = result.outlines
    section = next(i for i, line in enumerate(lines) if "pytest-niah: lexical-tfidf" in line)
    final = next(
        i for i, line in enumerate(lines) if re.search(r"=+ \d+ passed.* in [\d.]+s", line)
    )
    assert section < final


def test_gate_column_shows_the_verdicts(niah):
    result = niah.run("--niah-min-ratio=0.9")
    assert niah.gates(result, "literal") == {128: "pass", 256: "pass"}
    assert niah.gates(result, "onehop") == {
        128: "FAIL: comparative ratio 0.500 < 0.9",
        256: "FAIL: comparative ratio 0.500 < 0.9",
    }


def test_no_section_when_no_niah_test_ran(niah):
    result = niah.run("-k", "no-such-test")
    assert "pytest-niah:" not in result.stdout.str()
    result = niah.run("--collect-only")
    assert "pytest-niah:" not in result.stdout.str()


def test_partial_run_still_summarizes(niah):
    result = niah.run("-k", "gate-literal-L128")
    result.assert_outcomes(passed=1)
    assert list(niah.tables(result)["literal"]["rows"]) == [128, 256]


def test_effect_size_is_not_rounding_noise(niah):
    """TF-IDF ignores word order: a question's literal scores differ only by float dust."""
    result = niah.run("--niah-arms=literal")
    for row in niah.tables(result)["literal"]["rows"].values():
        effect = float(row["effect"])
        assert math.isnan(effect) or abs(effect) < 1e3, row


def test_metrics_add_no_warnings_to_the_users_run(niah):
    result = niah.run("--niah-arms=literal", "--niah-lengths=128")
    assert "NearConstantInputWarning" not in result.stdout.str()
