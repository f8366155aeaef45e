from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.parsers import Allowance
from pytest_niah.config.parsers import parse_allowances as parse_fail_expressions
from pytest_niah.experiment import run_experiment
from pytest_niah.measure.stats import METRICS
from pytest_niah.report.terminal import comparison_table
from pytest_niah.results.compare import Comparison, compare_results
from pytest_niah.results.niah_results import NiahResults

GROUPS = ("dietary", "location", "medical", "vehicle")  # 16 needle groups
N_GROUPS = 16
EVERY_METRIC = "norm:0,ratio:0%,auc:0,sep:0%,d:0"


def config(shared_corpus_dir, **changes) -> NiahConfig:
    base = dict(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128, 512),
        positions=4,
        arms=("onehop", "literal"),
        bootstrap=0,
        groups=GROUPS,
    )
    return NiahConfig(**(base | changes))


@pytest.fixture(scope="module")
def run(shared_corpus_dir) -> NiahResults:
    return run_experiment(config(shared_corpus_dir))


@pytest.fixture(scope="module")
def self_comparison(run) -> Comparison:
    return compare_results(run, run, n_resamples=200)


def lowered(results: NiahResults, length: int) -> NiahResults:
    """A worse run: every needle haystack of ``length`` scores half, minus 0.01."""
    cases = []
    for c in results.cases:
        if c.length == length:
            cos_qh = c.cos_qh * 0.5 - 0.01
            normalized = cos_qh / c.cos_qn if c.cos_qn > 0 else math.nan
            c = dataclasses.replace(
                c, cos_qh=cos_qh, normalized=normalized, found=cos_qh > c.control_score
            )
        cases.append(c)
    return dataclasses.replace(results, cases=tuple(cases))


def literal(messages: list[str]) -> list[str]:
    return [m for m in messages if "(literal, whole)" in m]


@pytest.fixture(scope="module")
def worse(run) -> Comparison:
    return compare_results(lowered(run, 512), run, n_resamples=200)


# -- a run against itself ----------------------------------------------------------------------


def test_a_run_against_itself_changes_nothing(run, self_comparison):
    c = self_comparison
    assert (c.unpaired_current, c.unpaired_baseline) == (0, 0)
    assert len(c.deltas) == 2 * 2 * len(METRICS)
    for d in c.deltas:
        assert d.cells == N_GROUPS * 2 * 4
        if math.isnan(d.baseline):
            # The lexical model gives one-hop needles no cosine, so no normalized similarity.
            assert (d.arm, d.metric) == ("onehop", "normalized")
            assert math.isnan(d.current) and math.isnan(d.delta)
            continue
        assert d.baseline == d.current, d
        assert (d.delta, d.low, d.high) == (0.0, 0.0, 0.0), d


def test_a_run_against_itself_matches_its_own_tables(run, self_comparison):
    for d in self_comparison.deltas:
        row = run.row(d.arm, d.length, d.scoring)
        assert getattr(row, d.metric) == pytest.approx(d.current, nan_ok=True)


def test_a_run_against_itself_fails_no_expression(self_comparison):
    assert self_comparison.regressions(parse_fail_expressions(EVERY_METRIC)) == []
    assert self_comparison.regressions(parse_fail_expressions("auc:0.02,ratio:5%")) == []


def test_a_run_against_its_saved_copy_changes_nothing(run, tmp_path):
    loaded = NiahResults.load(run.save(tmp_path / "run.json"))
    comparison = compare_results(loaded, run, n_resamples=50)
    assert all(d.delta == 0 or math.isnan(d.baseline) for d in comparison.deltas)


# -- a worse run -------------------------------------------------------------------------------


def test_a_drop_at_one_length_regresses_that_length_only(worse):
    for d in worse.deltas:
        if d.length == 128:
            assert d.delta == 0 or math.isnan(d.baseline), d
    auc = worse.delta("literal", 512, "auc")
    assert auc is not None and auc.delta < 0
    assert auc.high < 0, "the interval of the change excludes zero"
    assert auc.delta == pytest.approx(auc.current - auc.baseline)
    assert worse.delta("onehop", 512, "comparative_ratio").delta < 0

    messages = worse.regressions(parse_fail_expressions("auc:0.02,ratio:5%"))
    assert messages
    assert all(" at 512 tokens " in m for m in messages), messages
    assert all(m.startswith(("AUC ", "comparative ratio ")) for m in messages), messages
    assert any(m.startswith("AUC at 512 tokens (literal, whole) fell") for m in messages)
    assert any(
        m.startswith("comparative ratio at 512 tokens (onehop, whole) fell") for m in messages
    )


def test_regression_message_format(worse):
    d = worse.delta("literal", 512, "auc")
    [message] = literal(worse.regressions([Allowance("auc", 0.02, relative=False)]))
    assert message == (
        f"AUC at 512 tokens (literal, whole) fell {d.baseline - d.current:.3f} "
        f"({d.baseline:.3f} -> {d.current:.3f}, 95% CI of the change "
        f"[{d.low:.2f}, {d.high:.2f}]) > allowed 0.02"
    )
    [relative] = literal(worse.regressions([Allowance("auc", 1.0, relative=True)]))
    allowed = 0.01 * d.baseline
    assert relative.endswith(f"> allowed {allowed:.3f} (1% of {d.baseline:.3f})")


def test_absolute_and_relative_thresholds(worse):
    d = worse.delta("literal", 512, "auc")
    drop = d.baseline - d.current
    percent = 100 * drop / d.baseline

    def fails(threshold: Allowance) -> bool:
        return bool(literal(worse.regressions([threshold])))

    assert fails(Allowance("auc", drop * 0.99, relative=False))
    assert not fails(Allowance("auc", drop * 1.01, relative=False))
    assert fails(Allowance("auc", percent * 0.99, relative=True))
    assert not fails(Allowance("auc", percent * 1.01, relative=True))
    # A relative allowance scales with the baseline, an absolute one does not.
    assert Allowance("auc", 5, relative=True).allowed(0.5) == pytest.approx(0.025)
    assert Allowance("auc", 0.05, relative=False).allowed(0.5) == 0.05
    assert Allowance("separation", 10, relative=True).allowed(-0.2) == pytest.approx(0.02)


def test_a_metric_with_several_thresholds_is_reported_once(worse):
    one = worse.regressions(parse_fail_expressions("auc:0.02"))
    both = worse.regressions(parse_fail_expressions("auc:0.02,auc:1%"))
    assert both == one


def test_an_improvement_is_no_regression(run):
    better = compare_results(run, lowered(run, 512), n_resamples=50)
    assert better.delta("literal", 512, "auc").delta > 0
    assert better.regressions(parse_fail_expressions(EVERY_METRIC)) == []


def test_a_metric_that_becomes_undefined_is_a_regression(run):
    broken = dataclasses.replace(
        run,
        cases=tuple(
            dataclasses.replace(c, problem="non-finite embedding")
            if (c.arm, c.length) == ("literal", 512)
            else c
            for c in run.cases
        ),
    )
    comparison = compare_results(broken, run, n_resamples=50)
    messages = comparison.regressions(parse_fail_expressions("auc:0.5"))
    assert messages == [
        f"AUC at 512 tokens (literal, whole) is undefined in this run (baseline "
        f"{run.row('literal', 512).auc:.3f})"
    ]


# -- different grids ---------------------------------------------------------------------------


def test_only_identical_cells_are_compared_when_positions_differ(shared_corpus_dir, run):
    three = run_experiment(config(shared_corpus_dir, positions=3))
    comparison = compare_results(three, run, n_resamples=50)
    # Index p of a 3-position grid sits at another depth than p of a 4-position grid, with
    # another needle name; only the start (p00) is the same cell in both.
    slices = 2 * 2  # arms x lengths
    orders = 2
    assert comparison.unpaired_current == N_GROUPS * slices * orders * 2
    assert comparison.unpaired_baseline == N_GROUPS * slices * orders * 3
    assert {d.cells for d in comparison.deltas} == {N_GROUPS * orders}
    assert len(comparison.deltas) == slices * len(METRICS)


def test_cells_of_one_run_only_are_counted_not_compared(run):
    short = dataclasses.replace(run, cases=tuple(c for c in run.cases if c.length == 128))
    comparison = compare_results(short, run, n_resamples=50)
    assert comparison.unpaired_current == 0
    assert comparison.unpaired_baseline == len(run.cases) // 2
    assert comparison.delta("literal", 512, "auc") is None
    assert comparison.delta("literal", 128, "auc").delta == 0
    assert {d.length for d in comparison.deltas} == {128}


def test_intervals_follow_the_seed(worse, run):
    again = compare_results(lowered(run, 512), run, n_resamples=200)
    assert again.to_dict() == worse.to_dict()  # NaN != NaN, None == None
    other = compare_results(lowered(run, 512), run, n_resamples=200, seed=1)
    assert other.delta("literal", 512, "auc").delta == worse.delta("literal", 512, "auc").delta
    assert other.to_dict() != worse.to_dict()


# -- expressions -------------------------------------------------------------------------------


def test_parse_expressions():
    assert parse_fail_expressions("auc:0.02,ratio:5%") == (
        Allowance("auc", 0.02, relative=False),
        Allowance("comparative_ratio", 5.0, relative=True),
    )
    assert parse_fail_expressions(" AUC : 0.02 , effect-size:0.5%, ") == (
        Allowance("auc", 0.02, relative=False),
        Allowance("effect_size", 0.5, relative=True),
    )
    assert parse_fail_expressions("auc:0,ratio:100%") == (
        Allowance("auc", 0.0, relative=False),
        Allowance("comparative_ratio", 100.0, relative=True),
    )


def test_allowance_describe():
    assert Allowance("auc", 0.02, relative=False).describe() == "AUC may fall at most 0.02"
    assert (
        Allowance("comparative_ratio", 5.0, relative=True).describe()
        == "comparative ratio may fall at most 5% of the baseline"
    )


# -- output ------------------------------------------------------------------------------------


def test_comparison_table(worse):
    lines = comparison_table(worse)
    assert len(lines) == 1 + len(worse.deltas)
    assert lines[0].split() == [
        "arm", "scoring", "length", "metric", "baseline", "current", "delta", "95%", "CI",
    ]  # fmt: skip
    assert len({len(line) for line in lines}) == 1, "columns are aligned"
    d = worse.delta("literal", 512, "auc")
    [row] = [
        line for line in lines if line.startswith("literal") and " 512 " in line and "AUC" in line
    ]
    assert row.split() == [
        "literal",
        "whole",
        "512",
        "AUC",
        f"{d.baseline:.3f}",
        f"{d.current:.3f}",
        f"{d.delta:+.3f}",
        f"[{d.low:+.2f},",
        f"{d.high:+.2f}]",
    ]
    [unchanged] = [
        line for line in lines if line.startswith("literal") and " 128 " in line and "AUC" in line
    ]
    assert "+0.000" in unchanged and "[+0.00, +0.00]" in unchanged
    # Separations are small: they keep four decimals.
    assert any(re.search(r"separation\s+-?\d\.\d{4}\s", line) for line in lines)
    assert any(line.split()[-3:] == ["nan", "[nan,", "nan]"] for line in lines)


def test_comparison_table_without_deltas_is_a_header():
    empty = Comparison(deltas=(), unpaired_current=3, unpaired_baseline=0)
    assert len(comparison_table(empty)) == 1


def test_to_dict_is_strict_json(worse):
    data = json.loads(json.dumps(worse.to_dict(), allow_nan=False))
    assert data["unpaired_current"] == data["unpaired_baseline"] == 0
    assert len(data["deltas"]) == len(worse.deltas)
    first = data["deltas"][0]
    assert set(first) == {
        "arm", "scoring", "length", "metric", "baseline", "current", "delta", "low", "high",
        "cells",
    }  # fmt: skip
    assert any(d["baseline"] is None for d in data["deltas"]), "NaN is written as null"
