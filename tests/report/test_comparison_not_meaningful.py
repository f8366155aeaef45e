"""Issue 32.3: a comparison carries the run's own ``n/m`` marks, and says why.

A model at chance has a normalized similarity its own table shows as ``n/m``; its
comparison with a baseline showed the number and a large "change" (``0.765 -> 2.275,
+1.510``) in the terminal, summary.md, report.html and comparison.json.
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_niah.config.gate_expressions import parse_allowances
from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import run_experiment
from pytest_niah.report import ReportComparison, comparisons_json, summary_markdown
from pytest_niah.report.comparison_table import comparison_table
from pytest_niah.report.html import render_html
from pytest_niah.report.terminal_tables import (
    AT_CHANCE,
    NOT_MEANINGFUL,
    fmt,
    length_table,
)
from pytest_niah.results.compare import Comparison, compare_results
from pytest_niah.results.niah_results import NiahResults

GROUPS = ("dietary-01", "location-02", "medical-03", "vehicle-04")


def _run(shared_corpus_dir, embedder) -> NiahResults:  # type: ignore[no-untyped-def]
    config = NiahConfig(
        model="hashing",
        corpus=str(shared_corpus_dir),
        lengths=(256,),
        positions=3,
        arms=("literal",),
        bootstrap=50,
        groups=GROUPS,
    )
    return run_experiment(config, embedder=embedder)


@pytest.fixture(scope="module")
def runs(shared_corpus_dir, hashing_embedder) -> tuple[NiahResults, NiahResults]:  # type: ignore[no-untyped-def]
    """(at chance, reading): a 2-dimensional hashing model can not tell needles apart."""
    chance = _run(shared_corpus_dir, hashing_embedder(None, dim=2))
    reading = _run(shared_corpus_dir, hashing_embedder(None))
    return chance, reading


def _normalized_row(lines: list[str]) -> list[str]:
    [row] = [line for line in lines if "normalized similarity" in line and "note" not in line]
    return re.split(r"\s{2,}", row.strip())


def test_the_chance_run_shows_n_m_in_its_own_table(runs):
    chance, reading = runs
    assert NOT_MEANINGFUL in length_table(chance, "literal")[1]
    assert NOT_MEANINGFUL not in length_table(reading, "literal")[1]


def test_falling_to_chance_shows_n_m_not_a_change(runs):
    chance, reading = runs
    comparison = compare_results(chance, reading, n_resamples=50, seed=1)
    lines = comparison_table(comparison)
    cells = _normalized_row(lines)
    baseline_value = fmt(reading.row("literal", 256).normalized, 3)
    # baseline (meaningful) shown; current, change and interval are n/m
    assert cells[5:9] == [baseline_value, NOT_MEANINGFUL, NOT_MEANINGFUL, NOT_MEANINGFUL]
    note = [line for line in lines if line.startswith("note:")]
    assert note == [
        f"note: normalized similarity {NOT_MEANINGFUL} (not meaningful) at literal/whole L256: "
        f"this run: {AT_CHANCE} (no change is shown)"
    ]
    # the other metrics still compare
    assert NOT_MEANINGFUL not in " ".join(
        line for line in lines if "AUC" in line and "note" not in line
    )


def test_rising_from_chance_marks_the_baseline_side(runs):
    chance, reading = runs
    comparison = compare_results(reading, chance, n_resamples=50, seed=1)
    cells = _normalized_row(comparison_table(comparison))
    assert cells[5] == NOT_MEANINGFUL and cells[7:9] == [NOT_MEANINGFUL] * 2
    assert cells[6] == fmt(reading.row("literal", 256).normalized, 3)
    delta = comparison.delta("literal", 256, "normalized")
    assert delta is not None and delta.not_meaningful == f"the baseline: {AT_CHANCE}"


def test_a_gate_on_a_value_that_means_nothing_is_inconclusive_and_says_why(runs):
    chance, reading = runs
    allowances = parse_allowances("norm:0.01,auc:0.02")
    for current, baseline in ((chance, reading), (reading, chance)):
        comparison = compare_results(current, baseline, n_resamples=50, seed=1)
        verdict = next(v for d, v in comparison.verdicts(allowances) if d.metric == "normalized")
        assert verdict.state == "inconclusive"
        assert "not meaningful" in verdict.reason and AT_CHANCE in verdict.reason
        assert verdict.resolve == "gate AUC or comparative ratio instead"
        # a number that means nothing never fails the build on its own (auto policy)
        assert verdict.outcome("auto") == "warn"


def _report(comparison: Comparison) -> ReportComparison:
    return ReportComparison("hashing", "base.json", comparison, parse_allowances("auc:0.02"))


def test_summary_md_html_and_json_carry_the_marks(runs):
    chance, reading = runs
    comparison = compare_results(chance, reading, n_resamples=50, seed=1)
    shown = _report(comparison)
    current = fmt(chance.row("literal", 256).normalized, 3)
    text = summary_markdown([chance], ["hashing"], [shown])
    [row] = [
        line
        for line in text.splitlines()
        if line.startswith("|") and "normalized similarity" in line
    ]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[6:9] == [NOT_MEANINGFUL] * 3 and current not in cells
    assert f"Note: normalized similarity {NOT_MEANINGFUL} (not meaningful)" in text
    page = render_html([chance], ["hashing"], [], [shown])
    assert f">{NOT_MEANINGFUL}<" in page and f">{current}<" not in page
    assert "Note: normalized similarity n/m (not meaningful)" in page
    [data] = json.loads(comparisons_json([shown]))["comparisons"]
    [normalized] = [d for d in data["deltas"] if d["metric"] == "normalized"]
    assert normalized["current_not_meaningful"] == AT_CHANCE
    assert normalized["baseline_not_meaningful"] == ""
