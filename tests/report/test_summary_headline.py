"""summary.md for a pull request: one headline line, the gated metrics first, relative paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah.config.gate_expressions import parse_allowances
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import compare_verdict, minimum_verdict
from pytest_niah.report import GateOutcome, ReportComparison
from pytest_niah.report.headline import gate_reason, headline, shown_path
from pytest_niah.report.markdown_and_csv import summary_markdown
from pytest_niah.results.compare import compare_results
from pytest_niah.results.niah_results import NiahResults


def gate(outcome: str, length: int = 128, label: str = "m") -> GateOutcome:
    return GateOutcome(label, "onehop", "whole", length, "auc", outcome)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], "⚠️ pytest-niah: nothing gated (2 models measured; no threshold and no "),
        (["pass", "pass"], "✅ pytest-niah: all 2 gates passed (2 models)"),
        (["pass", "warn"], "⚠️ pytest-niah: 1 of 2 gates warned, 1 passed (2 models)"),
        (["fail", "warn", "pass"], "❌ pytest-niah: 1 of 3 gates failed, 1 warned (m)"),
    ],
)
def test_the_headline_counts_gates_by_outcome(outcomes: list[str], expected: str) -> None:
    line = headline(["m", "n"], [gate(o) for o in outcomes])
    assert line.startswith(expected) and "\n" not in line


def test_summary_opens_with_the_headline_and_shows_gated_metrics_first(
    results: NiahResults,
) -> None:
    gates = [gate("pass", 128, "lex"), gate("fail", 512, "lex")]
    text = summary_markdown([results], ["lex"], gates=gates)
    first, rest = text.split("\n", 1)
    assert first == "# ❌ pytest-niah: 1 of 2 gates failed (lex)"
    gated = rest.split("Gated lengths:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    header = [cell.strip() for cell in gated[0].split("|")[1:-1]]
    assert header == ["variant", "length", "AUC \\[95% CI\\]", "gate"]
    assert [line.split("|")[2].strip() for line in gated[2:]] == ["128", "512"]
    assert [line.split("|")[-2].strip() for line in gated[2:]] == ["pass", "fail"]
    # Every other metric is folded below the gated table.
    assert rest.index("Gated lengths:") < rest.index("<details><summary>Per-length tables")


def test_ungated_comparison_rows_are_folded_and_paths_are_relative(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    baseline = tmp_path / ".niah" / "runs" / "m" / "base.json"
    comparison = compare_results(results, results, n_resamples=20, seed=1)
    compared = ReportComparison("lex", str(baseline), comparison, parse_allowances("auc:0.02"))
    text = summary_markdown([results], ["lex"], [compared])
    assert text.startswith("# ✅ pytest-niah: all ")
    assert "## Comparison: lex versus .niah/runs/m/base.json\n" in text
    assert str(tmp_path) not in text
    main_table = text.split("| arm ", 1)[1].split("\n\n", 1)[0]
    assert "AUC" in main_table and "separation" not in main_table
    assert "<details><summary>Metrics not gated (" in text


def test_shown_path_keeps_paths_outside_the_folder(tmp_path: Path) -> None:
    assert shown_path(str(tmp_path / "a" / "b.json"), tmp_path) == "a/b.json"
    assert shown_path("/elsewhere/b.json", tmp_path) == "/elsewhere/b.json"
    assert shown_path("base", tmp_path) == "base"


@pytest.mark.parametrize(
    ("verdict", "outcome", "reason"),
    [
        (
            minimum_verdict(Interval("auc", 0.55, 0.50, 0.58), 0.6),
            "fail",
            "AUC 0.550, below the threshold 0.6",
        ),
        (
            minimum_verdict(Interval("auc", 0.62, 0.55, 0.70), 0.6),
            "warn",
            "AUC 0.620: inconclusive, its 95% interval crosses the threshold 0.6",
        ),
        (
            compare_verdict(Interval("auc", -0.05, -0.08, -0.03), 0.02),
            "fail",
            "AUC changed -0.050, fell past the allowed drop 0.020",
        ),
        (
            compare_verdict(Interval("auc", -0.03, -0.10, 0.04), 0.02),
            "fail",
            "AUC changed -0.030: inconclusive, its 95% interval crosses the allowed drop 0.020; "
            "the point is past it",
        ),
        (
            compare_verdict(Interval("comparative_ratio", 0.0, 0.0, 0.0), 0.02, paired_cells=0),
            "fail",
            "comparative ratio: no cell paired with the baseline",
        ),
        (minimum_verdict(Interval("auc", 0.9, 0.85, 0.95), 0.6), "pass", ""),
    ],
)
def test_each_warned_or_failed_gate_says_why_in_one_line(verdict, outcome, reason) -> None:
    assert verdict.outcome("auto") == outcome
    assert gate_reason(verdict, outcome) == reason


def test_the_headline_names_the_first_failing_gate_and_its_reason() -> None:
    verdict = minimum_verdict(Interval("auc", 0.55, 0.50, 0.58), 0.6)
    failed = GateOutcome("m", "onehop", "whole", 512, "auc", "fail", gate_reason(verdict, "fail"))
    line = headline(["m"], [gate("pass"), failed])
    assert line == (
        "❌ pytest-niah: 1 of 2 gates failed (m): m onehop/whole L512: AUC 0.550, below the "
        "threshold 0.6"
    )


def test_the_headline_counts_models_not_runs(results: NiahResults) -> None:
    """A baseline run of the same model beside it is one model, not two."""
    text = summary_markdown(
        [results, results], ["lex", "lex (base)"], gates=[gate("pass", label="lex")]
    )
    assert text.splitlines()[0] == "# ✅ pytest-niah: all 1 gates passed (1 model)"
