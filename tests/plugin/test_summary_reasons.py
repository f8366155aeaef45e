"""summary.md and the GitHub step summary say why, count models, and are always written (#31)."""

from __future__ import annotations

import pytest

LITERAL = ("--niah-arms=literal",)


def first_line(path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0]


def test_the_step_summary_is_appended_without_a_report(niah, monkeypatch):
    summary = niah.pytester.path / "step-summary.md"
    summary.write_text("an earlier step's line\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = niah.run("--niah-min-auc=0.4", *LITERAL)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("an earlier step's line\n")
    assert "# ✅ pytest-niah: all 2 gates passed (1 model)" in text
    result.stdout.fnmatch_lines(["*step-summary.md (appended: GITHUB_STEP_SUMMARY)"])


def test_a_failed_gate_says_why_in_the_headline_and_its_row(niah):
    result = niah.run("--niah-min-auc=0.99", "--niah-arms=onehop", "--niah-report=rep")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = niah.pytester.path / "rep" / "summary.md"
    assert first_line(summary) == (
        "# ❌ pytest-niah: 2 of 2 gates failed (lexical-tfidf): lexical-tfidf onehop/whole "
        "L128: AUC 0.482, below the threshold 0.99"
    )
    rows = [line for line in summary.read_text().splitlines() if line.startswith("| onehop/")]
    assert [row.rsplit("|", 2)[1].strip() for row in rows] == [
        "fail: AUC 0.482, below the threshold 0.99",
        "fail: AUC 0.464, below the threshold 0.99",
    ]


def test_an_inconclusive_gate_says_its_interval_crosses_the_threshold(niah):
    result = niah.run("--niah-min-auc=128=0.97", *LITERAL, "--niah-report=rep")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    line = first_line(niah.pytester.path / "rep" / "summary.md")
    assert line.startswith("# ⚠️ pytest-niah: 1 of 1 gates warned, 0 passed (1 model): ")
    assert line.endswith("AUC 0.982: inconclusive, its 95% interval crosses the threshold 0.97")


def test_a_same_model_comparison_counts_one_model(niah):
    saved = niah.run(*LITERAL, "--niah-save=base")
    assert saved.ret == pytest.ExitCode.OK, saved.stdout.str()
    result = niah.run(
        *LITERAL, "--niah-compare=base", "--niah-compare-fail=auc:0.02", "--niah-report=rep"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert first_line(niah.pytester.path / "rep" / "summary.md").endswith("passed (1 model)")
