"""The gates of one per-length row (pytest_niah.measure.gating): which apply, and what they do."""

from __future__ import annotations

import math

import pytest

from pytest_niah.config.gate_expressions import Allowance, Thresholds
from pytest_niah.measure.comparison_verdicts import unpaired_verdict
from pytest_niah.measure.gating import Gate, gated_at, row_gates
from pytest_niah.measure.records import IntervalRow, MetricRow
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import UNPAIRED, compare_verdict

NONE = Thresholds()


def metric_row(length=256, *, auc=0.8, ratio=0.9, arm="onehop", scoring="whole", questions=8):
    numbers = dict.fromkeys(
        ("cos_qh", "cos_qn", "normalized", "auc_study", "separation", "effect_size"), 0.5
    )
    numbers |= dict.fromkeys(("pearson_r", "slope", "begin", "middle", "end"), 0.5)
    counts = dict.fromkeys(
        ("found", "missed", "truncated", "unread", "norm_excluded", "duplicates", "invalid"), 0
    )
    return MetricRow(
        arm=arm,
        scoring=scoring,
        length=length,
        by="length",
        key="",
        n_cases=48,
        n_questions=questions,
        comparative_ratio=ratio,
        auc=auc,
        **numbers,
        **counts,
    )


def interval(metric, low, high, *, length=256, arm="onehop", scoring="whole", point=0.8):
    return IntervalRow(arm, scoring, length, metric, point, low, high, se=0.01, groups=8)


def gates_of(row, intervals=(), *, min_auc=NONE, min_ratio=NONE, compared=(), policy="auto"):
    return row_gates(
        row, intervals, min_auc=min_auc, min_ratio=min_ratio, compared=compared, policy=policy
    )


def test_each_minimum_reads_its_own_metric_threshold_and_interval():
    row = metric_row(auc=0.8, ratio=0.9)
    intervals = [interval("auc", 0.75, 0.85), interval("comparative_ratio", 0.85, 0.95)]
    auc, ratio = gates_of(
        row, intervals, min_auc=Thresholds(0.7), min_ratio=Thresholds(None, ((256, 0.95),))
    )
    assert (auc.what, auc.verdict.metric, auc.verdict.limit) == ("--niah-min-auc", "auc", 0.7)
    assert (auc.verdict.point, auc.verdict.low, auc.verdict.high) == (0.8, 0.75, 0.85)
    assert (auc.verdict.state, auc.outcome) == ("meets threshold", "pass")
    assert (ratio.what, ratio.verdict.metric) == ("--niah-min-ratio", "comparative_ratio")
    assert (ratio.verdict.point, ratio.verdict.low, ratio.verdict.limit) == (0.9, 0.85, 0.95)
    assert (ratio.verdict.state, ratio.outcome) == ("inconclusive", "fail")  # point below


def test_a_length_without_a_threshold_has_no_minimum_gate():
    row = metric_row(length=128)
    assert gates_of(row, min_auc=Thresholds(None, ((256, 0.7),))) == []
    assert [g.what for g in gates_of(row, min_ratio=Thresholds(0.5))] == ["--niah-min-ratio"]


def test_only_the_rows_own_interval_is_read():
    """Intervals of another length, arm, scoring or metric must not stand in for the row's."""
    row = metric_row(auc=0.8)
    others = [
        interval("auc", 0.79, 0.81, length=128),
        interval("auc", 0.79, 0.81, arm="literal"),
        interval("auc", 0.79, 0.81, scoring="chunk-max"),
        interval("comparative_ratio", 0.79, 0.81),
    ]
    [gate] = gates_of(row, others, min_auc=Thresholds(0.7))
    assert math.isnan(gate.verdict.low) and math.isnan(gate.verdict.high)
    # Without its interval the gate cannot tell: inconclusive over the row's own groups.
    assert gate.verdict.state == "inconclusive" and gate.verdict.groups == 8
    assert gate.verdict.reason.startswith("no interval: bootstrap off")
    assert gate.outcome == "warn"
    [own] = gates_of(row, [*others, interval("auc", 0.75, 0.85)], min_auc=Thresholds(0.7))
    assert (own.verdict.low, own.verdict.high, own.verdict.state) == (0.75, 0.85, "meets threshold")


def test_a_row_of_one_group_without_an_interval_says_so():
    [gate] = gates_of(metric_row(questions=1), min_auc=Thresholds(0.7))
    assert gate.verdict.reason.startswith("no interval: 1 needle group")


def test_the_policy_decides_only_inconclusive_gates():
    row = metric_row(auc=0.8)
    straddled = [interval("auc", 0.6, 0.9)]
    for policy, outcome in (("auto", "warn"), ("fail", "fail"), ("warn", "warn"), ("pass", "pass")):
        [gate] = gates_of(row, straddled, min_auc=Thresholds(0.7), policy=policy)
        assert gate.outcome == outcome, policy
        [clear] = gates_of(
            row, [interval("auc", 0.75, 0.85)], min_auc=Thresholds(0.9), policy=policy
        )
        assert clear.outcome == "fail", policy  # below threshold, whatever the policy


def test_comparison_verdicts_follow_the_minimums_with_their_outcomes():
    regressed = compare_verdict(Interval("auc", -0.1, -0.2, -0.05, 0.01, 8), 0.02)
    warned = compare_verdict(Interval("auc", -0.01, -0.05, 0.03, 0.01, 8), 0.02)
    gates = gates_of(metric_row(), min_auc=Thresholds(0.7), compared=[regressed, warned])
    assert [(g.what, g.outcome) for g in gates] == [
        ("--niah-min-auc", "warn"),
        ("--niah-compare-fail", "fail"),
        ("--niah-compare-fail", "warn"),
    ]
    assert gates[1].verdict is regressed
    assert gates[1].message().startswith("--niah-compare-fail: AUC changed -0.100 [-0.200, -0.050]")


def test_unpaired_verdict_fails_under_every_policy_and_names_the_cells():
    verdict = unpaired_verdict(Allowance("auc", 0.02, relative=False), 12)
    assert (verdict.state, verdict.limit, verdict.paired_cells, verdict.run_cells) == (
        UNPAIRED,
        0.02,
        0,
        12,
    )
    assert {verdict.outcome(p) for p in ("auto", "fail", "warn", "pass")} == {"fail"}
    relative = unpaired_verdict(Allowance("comparative_ratio", 5, relative=True), 12)
    assert math.isnan(relative.limit) and relative.metric == "comparative_ratio"
    # Nothing was resampled: no group stands behind it (a message never claims one).
    assert verdict.groups == 0 and relative.groups == 0
    gate = Gate("--niah-compare-fail", verdict, verdict.outcome())
    assert gate.message().startswith(
        "--niah-compare-fail: AUC not compared (paired 0 of 12 cells): no paired cells"
    )


@pytest.mark.parametrize(
    ("min_auc", "min_ratio", "allowances", "gated"),
    [
        (NONE, NONE, (), False),
        (Thresholds(0.0), NONE, (), True),  # a threshold of 0 still gates
        (NONE, Thresholds(0.0), (), True),
        (Thresholds(None, ((128, 0.7),)), NONE, (), False),  # another length's threshold
        (NONE, Thresholds(None, ((128, 0.7),)), (), False),
        (NONE, NONE, (Allowance("auc", 0.0, relative=False),), True),
    ],
)
def test_gated_at(min_auc, min_ratio, allowances, gated):
    assert gated_at(256, min_auc=min_auc, min_ratio=min_ratio, allowances=allowances) is gated
