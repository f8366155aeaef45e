"""The gate of one length (pytest_niah.measure.gating): each rule on its own, on real records.

A comparison here is a real :class:`~pytest_niah.results.compare.Comparison` of real
:class:`~pytest_niah.results.compare.Delta` records, written out by hand so that each rule
is seen alone (``compare_results`` builds the same records from two runs).
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from pytest_niah.config.gate_expressions import Allowance, Thresholds
from pytest_niah.measure.comparison_verdicts import (
    compare_verdicts,
    delta_verdict,
    delta_verdicts,
    slice_verdicts,
)
from pytest_niah.measure.gate_reasons import GateOutcome, gate_reason, suggest_gates
from pytest_niah.measure.gating import (
    COMPARE_FAIL,
    MIN_AUC,
    MIN_RATIO,
    Gate,
    LengthGates,
    comparison_gates,
    gate_cell,
    gated_at,
    length_gates,
    worst_outcome,
)
from pytest_niah.measure.records import IntervalRow, MetricRow
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import UNPAIRED, compare_verdict, minimum_verdict
from pytest_niah.results.compare import Comparison, Delta

NAN = math.nan
NONE = Thresholds()
AUC_002 = Allowance("auc", 0.02, relative=False)
POLICIES = ("auto", "fail", "warn", "pass")
WHERE = ("onehop", "whole", 256)


def row(length=256, *, auc=0.8, ratio=0.9, arm="onehop", scoring="whole", questions=8):
    numbers = dict.fromkeys(
        ("cos_qh", "cos_qn", "normalized", "auc_study", "separation", "effect_size"), 0.5
    )
    numbers |= dict.fromkeys(("pearson_r", "slope", "begin", "middle", "end"), 0.5)
    counts = dict.fromkeys(
        ("found", "missed", "truncated", "unread", "norm_excluded", "duplicates", "invalid"), 0
    )
    return MetricRow(
        arm, scoring, length, "length", "", 48, questions, **numbers, comparative_ratio=ratio,
        auc=auc, **counts,
    )  # fmt: skip


def interval(metric="auc", low=0.75, high=0.85, *, where=WHERE):
    return IntervalRow(*where, metric, 0.8, low, high, se=0.01, groups=8)


def delta(change=-0.01, low=-0.015, high=-0.005, *, where=WHERE, metric="auc", **fields):
    """A real delta of ``metric`` at ``where``: 12 of 12 cells paired, baseline 0.8."""
    values = {"baseline": 0.8, "cells": 12, "run_cells": 12} | fields
    base = values.pop("baseline")
    return Delta(
        *where, metric=metric, baseline=base, current=base + change, delta=change, low=low,
        high=high, se=0.005, groups=8, **values,
    )  # fmt: skip


def comparison(*deltas, paired=None, run_cells=None):
    slices = dict.fromkeys((d.arm, d.scoring, d.length) for d in deltas)
    paired = {w: 12 for w in slices} if paired is None else paired
    run_cells = {w: 12 for w in slices} if run_cells is None else run_cells
    return Comparison(tuple(deltas), paired, 0, 0, run_cells=run_cells)


def gates_of(the_row, intervals=(), *, compared=None, allowances=(), policy="auto", **limits):
    limits = {"min_auc": NONE, "min_ratio": NONE} | limits
    return length_gates(
        the_row, intervals, comparison=compared, allowances=allowances, policy=policy, **limits
    )


# -- the comparison's verdicts -----------------------------------------------------------------


def test_a_change_inside_the_allowance_is_within_it_and_counts_its_cells():
    verdict = delta_verdict(delta(run_cells=20, cells=12), AUC_002)
    assert (verdict.state, verdict.limit, verdict.point) == ("within allowance", 0.02, -0.01)
    assert (verdict.paired_cells, verdict.run_cells) == (12, 20)
    assert delta_verdict(delta(run_cells=None), AUC_002).run_cells == 12  # None: as paired


def test_a_relative_allowance_scales_the_baselines_magnitude():
    five = Allowance("auc", 5, relative=True)
    assert delta_verdict(delta(baseline=0.8), five).limit == pytest.approx(0.04)
    assert delta_verdict(delta(baseline=-0.8), five).limit == pytest.approx(0.04)


def test_a_metric_undefined_in_the_baseline_has_nothing_to_fall_from():
    verdict = delta_verdict(delta(-0.5, -0.6, -0.4, baseline=NAN), AUC_002)
    assert verdict.state == "within allowance" and not verdict.past_limit
    assert verdict.reason == "undefined in the baseline: nothing to fall from"


def test_a_minority_of_paired_cells_or_an_unresolved_grid_cannot_pass():
    minority = delta_verdict(delta(cells=5, run_cells=11), AUC_002)
    assert minority.state == "inconclusive" and minority.outcome("auto") == "fail"
    unresolved = delta_verdict(delta(unresolved="needles outside the gap"), AUC_002)
    assert (unresolved.state, unresolved.reason) == ("inconclusive", "needles outside the gap")


@pytest.mark.parametrize("side", ["current_not_meaningful", "baseline_not_meaningful"])
def test_a_change_of_a_value_that_means_nothing_is_inconclusive_and_never_past(side):
    regressed = delta(-0.3, -0.4, -0.2, metric="normalized")
    assert delta_verdict(regressed, Allowance("normalized", 0.02, False)).state == "regressed"
    marked = delta(-0.3, -0.4, -0.2, metric="normalized", **{side: "at chance"})
    verdict = delta_verdict(marked, Allowance("normalized", 0.02, False))
    who = "this run" if side == "current_not_meaningful" else "the baseline"
    assert verdict.state == "inconclusive" and verdict.past_limit is False
    assert verdict.reason == f"normalized similarity is not meaningful here ({who}: at chance)"
    assert verdict.resolve == "gate AUC or comparative ratio instead"
    assert {p: verdict.outcome(p) for p in POLICIES} == dict(
        zip(POLICIES, POLICIES, strict=True)
    ) | {"auto": "warn"}


def test_a_change_that_means_nothing_and_pairs_nothing_stays_unpaired():
    verdict = delta_verdict(delta(cells=0, current_not_meaningful="at chance"), AUC_002)
    assert verdict.state == UNPAIRED and verdict.outcome("pass") == "fail"


def test_the_gated_deltas_are_those_of_the_slice_and_of_an_allowed_metric_in_order():
    others = [("literal", "whole", 256), ("onehop", "chunk-max", 256), ("onehop", "whole", 512)]
    here = [delta(metric="auc"), delta(metric="comparative_ratio"), delta(metric="separation")]
    there = [delta(where=w) for w in others]
    ratio = Allowance("comparative_ratio", 0.05, relative=False)
    both = (ratio, AUC_002, Allowance("auc", 5, relative=True))
    pairs = delta_verdicts([*here, *there], both, WHERE)
    assert [(d.metric, v.limit) for d, v in pairs] == [
        ("auc", 0.02),
        ("auc", pytest.approx(0.04)),
        ("comparative_ratio", 0.05),
    ]
    everywhere = delta_verdicts([*here, *there], [AUC_002])
    assert [(d.arm, d.scoring, d.length) for d, _ in everywhere] == [WHERE, *others]
    assert delta_verdicts(here, []) == []


def test_a_slice_no_baseline_cell_pairs_with_fails_each_allowance_under_every_policy():
    relative = Allowance("comparative_ratio", 5, relative=True)
    run = comparison(delta(), paired={WHERE: 0}, run_cells={WHERE: 9})
    absolute, scaled = compare_verdicts(run, [AUC_002, relative], WHERE)
    assert (absolute.state, absolute.metric, absolute.limit) == (UNPAIRED, "auc", 0.02)
    assert (scaled.metric, math.isnan(scaled.limit)) == ("comparative_ratio", True)
    assert (absolute.paired_cells, absolute.run_cells, absolute.groups) == (0, 9, 0)
    assert {absolute.outcome(p) for p in POLICIES} == {"fail"}
    elsewhere = ("onehop", "whole", 4096)  # neither paired nor run: no cells
    assert compare_verdicts(run, [AUC_002], elsewhere)[0].run_cells == 0


def test_a_paired_slice_gets_its_deltas_verdicts():
    run = comparison(delta(), delta(-0.1, -0.12, -0.08, where=("onehop", "whole", 512)))
    (verdict,) = compare_verdicts(run, [AUC_002], ("onehop", "whole", 512))
    assert (verdict.state, verdict.point) == ("regressed", -0.1)


def test_every_slice_of_the_run_is_gated_in_its_order_paired_or_not():
    late, early = ("onehop", "whole", 512), ("onehop", "whole", 128)
    run = comparison(delta(where=late), run_cells={early: 4, late: 12}, paired={late: 12})
    assert [(w, v.state) for w, v in slice_verdicts(run, [AUC_002])] == [
        (early, UNPAIRED),
        (late, "within allowance"),
    ]
    older = comparison(delta(where=late), run_cells={})  # before run_cells were kept
    assert [w for w, _ in slice_verdicts(older, [AUC_002])] == [late]


# -- the gates of a length ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_auc", "min_ratio", "allowances", "gated"),
    [
        (NONE, NONE, (), False),
        (Thresholds(0.6), NONE, (), True),
        (NONE, Thresholds(None, ((256, 0.6),)), (), True),
        (Thresholds(None, ((512, 0.6),)), Thresholds(None, ((128, 0.6),)), (), False),
        (NONE, NONE, (AUC_002,), True),
    ],
)
def test_a_length_is_gated_by_its_thresholds_or_by_any_allowance(
    min_auc, min_ratio, allowances, gated
):
    assert gated_at(256, min_auc=min_auc, min_ratio=min_ratio, allowances=allowances) is gated


def test_thresholds_gate_their_lengths_and_allowances_every_length():
    per_length = Thresholds(None, ((512, 0.7),))
    here = gates_of(row(), [interval()], min_auc=per_length)
    assert here.gates == () and here.outcome is None and here.cell == "-"
    there = gates_of(row(512), [interval(where=("onehop", "whole", 512))], min_auc=per_length)
    assert [(g.what, g.verdict.limit) for g in there] == [(MIN_AUC, 0.7)]
    run = comparison(delta(), delta(where=("onehop", "whole", 512)))
    for length in (256, 512):
        gates = gates_of(row(length), compared=run, allowances=[AUC_002])
        assert [g.what for g in gates] == [COMPARE_FAIL]


def test_the_minimums_come_first_then_the_comparisons_and_the_worst_outcome_wins():
    run = comparison(delta(-0.1, -0.12, -0.08))
    intervals = [interval(), interval("comparative_ratio", 0.85, 0.95)]
    gates = gates_of(
        row(), intervals, min_auc=Thresholds(0.7), min_ratio=Thresholds(0.8), compared=run,
        allowances=[AUC_002],
    )  # fmt: skip
    assert isinstance(gates, LengthGates) and gates.where == WHERE
    assert [(g.what, g.verdict.metric, g.outcome) for g in gates] == [
        (MIN_AUC, "auc", "pass"),
        (MIN_RATIO, "comparative_ratio", "pass"),
        (COMPARE_FAIL, "auc", "fail"),
    ]
    assert (gates.outcome, gates.cell) == ("fail", "FAIL")


def test_no_comparison_or_no_allowance_gives_no_comparison_gate():
    run = comparison(delta(-0.1, -0.12, -0.08))
    assert gates_of(row(), compared=None, allowances=[AUC_002]).gates == ()
    assert gates_of(row(), compared=run, allowances=[]).gates == ()


def test_a_minimum_reads_its_own_rows_interval_only():
    strangers = [
        interval(where=("literal", "whole", 256)),
        interval(where=("onehop", "chunk-max", 256)),
        interval(where=("onehop", "whole", 512)),
        interval("comparative_ratio"),
    ]
    (alone,) = gates_of(row(questions=1), strangers, min_auc=Thresholds(0.6))
    assert alone.verdict.state == "inconclusive" and alone.verdict.groups == 1
    assert alone.verdict.reason == "no interval: 1 needle group" and alone.outcome == "warn"
    (own,) = gates_of(row(), [*strangers, interval()], min_auc=Thresholds(0.6))
    assert (own.verdict.low, own.verdict.high, own.verdict.point) == (0.75, 0.85, 0.8)
    assert (own.verdict.state, own.verdict.groups) == ("meets threshold", 8)


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        (0.65, {"auto": "warn", "fail": "fail", "warn": "warn", "pass": "pass"}),
        (0.55, {"auto": "fail", "fail": "fail", "warn": "warn", "pass": "pass"}),
    ],
)
def test_the_policy_decides_an_inconclusive_gate(point, expected):
    straddles = [interval(low=0.5, high=0.7)]
    for policy, outcome in expected.items():
        (gate,) = gates_of(row(auc=point), straddles, min_auc=Thresholds(0.6), policy=policy)
        assert (gate.verdict.state, gate.outcome) == ("inconclusive", outcome)


def test_the_policy_leaves_a_clear_verdict_alone_and_names_an_unknown_one():
    for policy in POLICIES:
        (below,) = gates_of(row(auc=0.5), [interval(low=0.4, high=0.55)], policy=policy,
                            min_auc=Thresholds(0.6))  # fmt: skip
        assert (below.verdict.state, below.outcome) == ("below threshold", "fail")
    with pytest.raises(ValueError, match="unknown inconclusive policy 'lenient'"):
        gates_of(row(auc=0.65), [interval(low=0.5, high=0.7)], min_auc=Thresholds(0.6),
                 policy="lenient")  # fmt: skip


def test_a_comparisons_gates_alone_follow_the_policy_per_slice():
    unpaired, paired = ("onehop", "whole", 128), WHERE
    run = comparison(delta(-0.03, -0.05, 0.01), run_cells={unpaired: 4, paired: 12})
    for policy in POLICIES:
        gates = comparison_gates(run, [AUC_002], policy)
        assert [lg.where for lg in gates] == [unpaired, paired]
        assert [[g.what for g in lg] for lg in gates] == [[COMPARE_FAIL], [COMPARE_FAIL]]
        assert gates[0].outcome == "fail"  # no paired cells, whatever the policy
        past = "fail" if policy == "auto" else policy  # inconclusive, the point past it
        assert gates[1].outcome == past


def test_each_gate_says_its_line_and_its_reason_under_the_models_label():
    verdict = minimum_verdict(Interval("auc", 0.5, 0.4, 0.55, 0.03, 8), 0.6)
    gate = Gate(MIN_AUC, verdict, "fail")
    assert gate.message().startswith("--niah-min-auc: AUC 0.500 [0.400, 0.550], threshold 0.6")
    assert gate.reason() == "AUC 0.500, below the threshold 0.6"
    passed = Gate(MIN_RATIO, minimum_verdict(Interval("auc", 0.9, 0.8, 0.95, 0.03, 8), 0.6), "pass")
    outcomes = LengthGates(WHERE, (gate, passed)).outcomes("m")
    assert outcomes == [
        GateOutcome("m", "onehop", "whole", 256, "auc", "fail", gate.reason()),
        GateOutcome("m", "onehop", "whole", 256, "auc", "pass", ""),
    ]


@pytest.mark.parametrize(
    ("outcomes", "worst", "cell"),
    [
        ((), None, "-"),
        (("pass",), "pass", "pass"),
        (("pass", "warn"), "warn", "warn"),
        (("warn", "pass", "fail"), "fail", "FAIL"),
        (("fail", "warn"), "fail", "FAIL"),
    ],
)
def test_the_gate_column_shows_the_worst_outcome(outcomes, worst, cell):
    verdict = minimum_verdict(Interval("auc", 0.8, 0.7, 0.9, 0.01, 8), 0.6)
    gates = tuple(Gate(MIN_AUC, verdict, o) for o in outcomes)
    assert worst_outcome(outcomes) == worst and worst_outcome(reversed(outcomes)) == worst
    assert gate_cell(gates) == cell == LengthGates(WHERE, gates).cell
    assert LengthGates(WHERE, gates).outcome == worst


def test_a_lengths_gates_are_a_value_the_summary_and_the_test_share_unchanged():
    verdict = minimum_verdict(Interval("auc", 0.8, 0.7, 0.9, 0.01, 8), 0.6)
    gates = LengthGates(WHERE, (Gate(MIN_AUC, verdict, "pass"),))
    with pytest.raises(dataclasses.FrozenInstanceError):
        gates.gates = ()  # type: ignore[misc]
    assert len({gates, LengthGates(WHERE, (Gate(MIN_AUC, verdict, "pass"),))}) == 1


def test_a_gates_outcome_is_a_value_too():
    outcome = GateOutcome("m", "onehop", "whole", 256, "auc", "fail", "AUC 0.500")
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.reason = ""  # type: ignore[misc]
    assert len({outcome, GateOutcome("m", "onehop", "whole", 256, "auc", "fail", "AUC 0.500")}) == 1


# -- why, in one line --------------------------------------------------------------------------


def change(point, low, high, limit=0.02, metric="auc", **cells):
    return compare_verdict(Interval(metric, point, low, high, 0.01, 8), limit, **cells)


DROP = "allowed drop 0.020"
CROSSES = "its 95% interval crosses the threshold 0.6"


def minimum(point, low, high, threshold=0.6, metric="auc"):
    return minimum_verdict(Interval(metric, point, low, high, 0.01, 8), threshold)


@pytest.mark.parametrize(
    ("verdict", "outcome", "reason"),
    [
        (minimum(0.8, 0.7, 0.9), "pass", ""),
        (minimum(0.5, 0.4, 0.55), "fail", "AUC 0.500, below the threshold 0.6"),
        (change(-0.1, -0.12, -0.08), "fail", f"AUC changed -0.100, fell past the {DROP}"),
        (minimum(0.65, 0.5, 0.7), "fail", f"AUC 0.650: inconclusive, {CROSSES}"),  # by policy
        (minimum(0.65, 0.5, 0.7), "warn",
         "AUC 0.650: inconclusive, its 95% interval crosses the threshold 0.6"),
        (minimum(0.55, 0.5, 0.7), "fail",
         f"AUC 0.550: inconclusive, {CROSSES}; the point is past it"),
        (minimum(0.55, 0.5, 0.7), "warn",
         "AUC 0.550: inconclusive, its 95% interval crosses the threshold 0.6"),
        (change(0.01, 0.0, 0.02), "fail", f"AUC changed +0.010: within allowance ({DROP})"),
        (minimum(0.8, 0.7, 0.9), "warn", "AUC 0.800: meets threshold (threshold 0.6)"),
        (change(-0.1, -0.12, -0.08, metric="separation"), "fail",
         "separation changed -0.1000, fell past the allowed drop 0.0200"),
        (minimum(NAN, NAN, NAN), "fail", "AUC undefined in this run"),
        (change(NAN, NAN, NAN, metric="comparative_ratio", paired_cells=0, run_cells=3), "fail",
         "comparative ratio: no cell paired with the baseline"),
    ],
)  # fmt: skip
def test_the_reason_names_the_metric_its_numbers_and_what_was_missed(verdict, outcome, reason):
    assert gate_reason(verdict, outcome) == reason


# -- a run that gated nothing ------------------------------------------------------------------


def lows(*rows):
    return [
        IntervalRow(arm, scoring, n, metric, 0.8, low, 0.99)
        for arm, scoring, n, metric, low in rows
    ]


def test_the_suggested_gates_are_the_lowest_lower_bounds_rounded_down():
    reads = lows(("onehop", "whole", 128, "auc", 0.876), ("literal", "whole", 128, "auc", 0.861),
                 ("onehop", "whole", 128, "comparative_ratio", 0.93),
                 ("onehop", "whole", 128, "separation", 0.01),
                 ("onehop", "whole", 256, "auc", NAN))  # fmt: skip
    assert suggest_gates({"m": reads}) == (
        "Its own 95% intervals support --niah-min-auc=128=0.86 --niah-min-ratio=128=0.93 (per "
        "length, the lowest lower bound over models, arms and scorings)."
    )


def test_at_chance_no_useful_gate_names_what_is_at_chance():
    chance = lows(("onehop", "chunk-max", 128, "auc", 0.509), ("onehop", "whole", 256, "auc", 0.7))
    said = suggest_gates({"m": chance, "n": lows(("literal", "whole", 128, "auc", 0.9))})
    assert said == (
        "Its own 95% intervals support --niah-min-auc=256=0.70 (per length, the lowest lower "
        "bound over models, arms and scorings). At chance: no useful gate at 128 (m: "
        "onehop/chunk-max): an AUC or comparative ratio interval reaches 0.5, so any threshold "
        "these results meet there passes a random model too."
    )
    alone = suggest_gates({"m": lows(("onehop", "whole", 128, "comparative_ratio", 0.5))})
    assert alone.startswith("At chance: no useful gate at 128 (onehop): ")


def test_without_intervals_the_suggestion_is_how_to_gate():
    assert suggest_gates({"m": lows(("onehop", "whole", 128, "auc", NAN))}).startswith(
        "Fix: gate it with --niah-min-auc=T --niah-min-ratio=R"
    )
