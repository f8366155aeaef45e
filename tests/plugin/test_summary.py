"""The terminal summary: a pytest-niah section per model, a table per arm, a row per length."""

from __future__ import annotations

import math
import os
import re

HEADER = [
    "length",
    "norm.sim",
    "ratio",
    "AUC",
    "separation",
    "effect",
    "acc@1",
    "MRR",
    "found",
    "missed",
    "truncated",
    "gate",
]


def test_section_title_table_and_rows(niah):
    result = niah.run("--niah-json=r.json")
    results = niah.load("r.json")
    assert niah.sections(result) == ["lexical-tfidf"]
    result.stdout.re_match_lines([r"=+ pytest-niah: lexical-tfidf =+$"])
    tables = niah.tables(result)
    assert list(tables) == ["literal", "onehop"]
    # "LABEL (MODEL), arm ARM, scoring SCORING: reads N tokens[, effective length ...]"
    assert tables["literal"]["title"] == (
        "lexical-tfidf (lexical:tfidf), arm literal, scoring whole: reads every token, "
        "effective length 256 tokens"
    )
    assert tables["onehop"]["title"] == (
        "lexical-tfidf (lexical:tfidf), arm onehop, scoring whole: reads every token, "
        "effective length below the shortest length"
    )
    for arm, table in tables.items():
        assert table["header"] == HEADER
        assert list(table["rows"]) == [128, 256]
        assert {row["gate"] for row in table["rows"].values()} == {"-"}
        assert table["details"] == {}
        for length, row in table["rows"].items():
            metrics = results.row(arm, length)
            interval = results.interval(arm, length, "auc", "whole")
            assert row["AUC"] == f"{metrics.auc:.3f} [{interval.low:.2f},{interval.high:.2f}]"
            assert row["ratio"] == f"{metrics.comparative_ratio:.3f}"
    assert tables["literal"]["rows"][128]["ratio"] == "1.000"
    assert tables["onehop"]["rows"][256]["ratio"] == "0.500"
    assert (tables["literal"]["rows"][256]["found"], tables["onehop"]["rows"][256]["missed"]) == (
        "12",
        "12",
    )
    # The one-hop needle alone shares no word with its question: no scale for normalizing.
    assert tables["literal"]["notes"] == []
    assert tables["onehop"]["notes"] == [
        "normalized similarity leaves out 24 cases whose needle alone scores below 0.1 against "
        "its question"
    ]
    # The tables fit 120 columns (long explanations go on lines of their own).
    section = result.outlines[result.outlines.index(tables["literal"]["title"]) :]
    section = section[: next(i for i, line in enumerate(section) if line.startswith("="))]
    table_lines = [line for line in section if re.match(r"  ( *\d+ | *length )", line)]
    assert len(table_lines) == 2 * 3
    assert all(len(line) <= 120 for line in table_lines), table_lines
    # What the run did comes last, then (nothing is gated here) the line that says so.
    cache = os.environ["NIAH_CACHE_DIR"]  # each test's own (tests/plugin/conftest.py)
    assert section[-2] == f"150 texts embedded, 0 read from the cache (cache {cache})"
    assert section[-1].startswith("pytest-niah: nothing was gated")


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
    assert niah.gates(result, "onehop") == {128: "FAIL", 256: "FAIL"}
    # The gate's numbers go below the table, one line per gate that did not pass.
    message = (
        "--niah-min-ratio: comparative ratio 0.500 [0.500, 0.500], threshold 0.9; MDE 0.000 "
        "at 2 groups: below threshold"
    )
    assert niah.details(result, "onehop") == {128: [("FAIL", message)], 256: [("FAIL", message)]}
    result.stdout.fnmatch_lines(
        [
            "*arm onehop, scoring whole:*",
            "  length  *  gate",
            "     128  *  FAIL",
            "     256  *  FAIL",
            "  note: normalized similarity leaves out *",
            f"  L128 FAIL {message}",
            f"  L256 FAIL {message}",
        ]
    )


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
