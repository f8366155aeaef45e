"""The verdicts of a comparison's deltas, its coverage rule, and the allowances' syntax."""

from __future__ import annotations

import dataclasses
import math

import pytest
from niah_synthetic import (
    GROUPS,
    model,
    results,
    scored,
    shifted,
    with_cases,
)

from pytest_niah.config.gate_expressions import Allowance, parse_allowances
from pytest_niah.report.comparison_table import comparison_table
from pytest_niah.results.compare import Delta, compare_results
from pytest_niah.results.niah_results import NiahResults

AUC_002 = Allowance("auc", 0.02, relative=False)


def compare(current, baseline, **kwargs):
    return compare_results(current, baseline, n_resamples=200, seed=0, **kwargs)


@pytest.fixture(scope="module")
def base() -> NiahResults:
    return results()


# -- verdicts on the deltas ------------------------------------------------------------------


def test_a_clear_drop_regresses_that_length_only(base):
    comparison = compare(shifted(base, 4096, -0.4), base)
    verdicts = {d.length: v for d, v in comparison.verdicts([AUC_002])}
    assert verdicts[4096].state == "regressed" and verdicts[4096].outcome() == "fail"
    assert verdicts[1024].state == "within allowance"
    d = comparison.delta("literal", 4096, "auc")
    assert d.delta == pytest.approx(d.current - d.baseline)
    assert d.high < 0
    assert [v.metric for _, v in comparison.verdicts([AUC_002], ("literal", "whole", 1024))] == [
        "auc"
    ]


def test_verdicts_pair_each_delta_with_each_allowance_of_its_metric(base):
    comparison = compare(base, base)
    allowances = parse_allowances("auc:0.02,ratio:5%,auc:1%")
    pairs = comparison.verdicts(allowances)
    assert [(d.length, d.metric) for d, _ in pairs] == [
        (1024, "comparative_ratio"),
        (1024, "auc"),
        (1024, "auc"),
        (4096, "comparative_ratio"),
        (4096, "auc"),
        (4096, "auc"),
    ]


def test_a_relative_allowance_scales_with_the_baseline():
    d = Delta("literal", "whole", 1024, "auc", 0.8, 0.77, -0.03, -0.04, -0.02, 0.005, 16, 64)
    assert d.verdict(Allowance("auc", 5, relative=True)).state == "within allowance"  # 0.04
    assert d.verdict(Allowance("auc", 2, relative=True)).state == "regressed"  # 0.016
    assert d.verdict(Allowance("auc", 2, relative=True)).limit == pytest.approx(0.016)


def test_a_metric_that_becomes_undefined_regresses(base):
    broken = with_cases(
        base,
        [
            dataclasses.replace(c, problem="non-finite") if c.length == 4096 else c
            for c in base.cases
        ],
    )
    comparison = compare(broken, base)
    d = comparison.delta("literal", 4096, "auc")
    assert math.isnan(d.current) and not math.isnan(d.baseline)
    verdict = d.verdict(AUC_002)
    assert verdict.state == "regressed" and "undefined in this run" in verdict.reason


def test_a_metric_undefined_in_both_runs_has_nothing_to_fall_from():
    # Every needle alone scores below the floor: no normalized similarity in either run.
    cases, negatives = scored(cos_qn=0.05)
    run = results(cases, negatives)
    d = compare(run, run).delta("literal", 1024, "normalized")
    assert math.isnan(d.baseline) and math.isnan(d.current)
    for allowance in (Allowance("normalized", 0.0, False), Allowance("normalized", 5, True)):
        verdict = d.verdict(allowance)
        assert verdict.state == "within allowance" and verdict.outcome("fail") == "pass"
        assert "undefined in the baseline" in verdict.reason


def test_an_interval_past_the_allowance_is_inconclusive_not_a_pass():
    # A point drop of 0.01 passed a point gate at auc:0.02; its interval reaches -0.05.
    d = Delta("literal", "whole", 1024, "auc", 0.8, 0.79, -0.01, -0.05, 0.03, 0.02, 16, 64)
    verdict = d.verdict(AUC_002)
    assert verdict.state == "inconclusive" and verdict.outcome("auto") == "warn"
    assert verdict.mde == pytest.approx(0.056)


def test_without_resamples_no_change_has_an_interval_and_no_verdict_is_settled(base):
    """Found: --niah-bootstrap=0 still bootstrapped comparisons 1000 times (the session and
    the command line replaced 0 with the default): 0 gives no interval, and no settled verdict."""
    comparison = compare_results(shifted(base, 4096, -0.4), base, n_resamples=0, seed=0)
    for d in comparison.deltas:
        assert math.isnan(d.low) and math.isnan(d.high) and math.isnan(d.se), d
        assert d.groups == len(GROUPS) and d.cells == 30
    verdicts = {d.length: v for d, v in comparison.verdicts([AUC_002])}
    assert {v.state for v in verdicts.values()} == {"inconclusive"}
    assert verdicts[1024].reason == "no interval: bootstrap off"
    assert (verdicts[1024].outcome(), verdicts[4096].outcome()) == ("warn", "fail")  # the point
    table = comparison_table(comparison, [AUC_002])
    assert all("(no CI: bootstrap off)" in line for line in table[1:])


def test_every_gated_slice_of_this_run_gets_a_verdict_paired_or_not(base):
    only_1024 = with_cases(base, [c for c in base.cases if c.length == 1024])
    comparison = compare(base, only_1024, allow=("lengths",))
    assert comparison.run_cells == {("literal", "whole", 1024): 30, ("literal", "whole", 4096): 30}
    assert comparison.paired == {("literal", "whole", 1024): 30}
    [(_, unpaired)] = [(w, v) for w, v in comparison.slice_verdicts([AUC_002]) if w[2] == 4096]
    assert unpaired.state == "no paired cells"
    assert (unpaired.paired_cells, unpaired.run_cells) == (0, 30)
    [paired] = comparison.gate_verdicts([AUC_002], ("literal", "whole", 1024))
    assert (paired.state, paired.paired_cells, paired.run_cells) == ("within allowance", 30, 30)


def test_a_length_pairing_a_minority_of_this_runs_cells_cannot_pass(base):
    """Found: allowing a grid difference (as the refusal's fix suggested), a run that paired a
    few of its cells passed on them. Fewer than half: inconclusive, and auto fails it."""
    cases, negatives = scored(positions=9)
    nine = results(cases, negatives, positions=9)
    # p0, p2, p4, p6, p8 of 9 sit at the depths of p0..p4 of 5, but only p0 keeps its index.
    comparison = compare(nine, base, allow=("positions",))
    assert comparison.paired == {("literal", "whole", 1024): 6, ("literal", "whole", 4096): 6}
    for d, verdict in comparison.verdicts([AUC_002]):
        assert (d.cells, d.run_cells) == (6, 54)
        assert verdict.state == "inconclusive" and verdict.outcome("auto") == "fail"
        assert "only 6 of this run's 54 cells" in verdict.reason
    # The same paired cells as half of a smaller run, or all of it, can pass.
    for kept, run_cells in (((0, 5), 12), ((0,), 6)):
        part = with_cases(nine, [c for c in nine.cases if c.position in kept])
        for d, verdict in compare(part, base, allow=("positions",)).verdicts([AUC_002]):
            assert (d.cells, d.run_cells) == (6, run_cells)
            assert verdict.state == "within allowance", verdict


# -- coverage: windows that differ where no needle sits ---------------------------------------


def windows_run(max_tokens: int | None, step: dict[int, int]) -> NiahResults:
    cases, negatives = scored(positions=10, offset=lambda length, p, _: p * step[length])
    return results(cases, negatives, model_info=model(max_tokens=max_tokens), positions=10)


def test_a_length_whose_needles_miss_the_region_between_the_windows_is_unresolved():
    step = {1024: 112, 4096: 455}  # offsets 0, 112, 224, ... and 0, 455, 910, ...
    current, baseline = windows_run(254, step), windows_run(126, step)
    comparison = compare(current, baseline)
    at_4096 = comparison.delta("literal", 4096, "auc")
    at_1024 = comparison.delta("literal", 1024, "auc")
    assert "254" in at_4096.unresolved and "126" in at_4096.unresolved
    assert at_1024.unresolved == ""  # the needle at 224 sits between the windows
    # The interval alone says "within allowance" (the scores are the same); coverage cannot.
    verdict = at_4096.verdict(AUC_002)
    assert verdict.state == "inconclusive" and verdict.reason == at_4096.unresolved
    assert "--niah-positions" in verdict.resolve
    assert verdict.outcome("auto") == "warn"
    assert at_1024.verdict(AUC_002).state == "within allowance"
    # A clear regression stays a regression.
    worse = compare(shifted(current, 4096, -0.4), baseline).delta("literal", 4096, "auc")
    assert worse.verdict(AUC_002).state == "regressed"


@pytest.mark.parametrize(
    ("windows", "step", "unresolved"),
    [
        ((254, 254), {1024: 112, 4096: 455}, False),  # the same window: nothing to probe
        ((None, 126), {1024: 112, 4096: 455}, False),  # one reads all: 455 lies between
        ((126, None), {1024: 112, 4096: 455}, False),
        ((254, 126), {1024: 112, 4096: 200}, False),  # a needle at 200
        ((254, 126), {1024: 300, 4096: 455}, True),  # 0, 300, ...: both lengths miss it
    ],
)
def test_coverage_rule_cases(windows, step, unresolved):
    current, baseline = windows_run(windows[0], step), windows_run(windows[1], step)
    comparison = compare(current, baseline)
    assert bool(comparison.delta("literal", 4096, "auc").unresolved) is unresolved
    if step[1024] == 300:
        assert comparison.delta("literal", 1024, "auc").unresolved


def test_a_short_length_read_whole_by_both_windows_is_resolved():
    cases, negatives = scored(lengths=(128,), positions=10, offset=lambda n, p, _: p * 12)
    current = results(
        cases, negatives, model_info=model(max_tokens=254), lengths=(128,), positions=10
    )
    baseline = results(
        cases, negatives, model_info=model(max_tokens=126), lengths=(128,), positions=10
    )
    # Offsets 0..108: every needle lies inside both windows.
    assert compare(current, baseline).delta("literal", 128, "auc").unresolved == ""


# -- allowances (the option's expressions) ----------------------------------------------------


def test_parse_allowances():
    assert parse_allowances("auc:0.02,ratio:5%") == (
        Allowance("auc", 0.02, relative=False),
        Allowance("comparative_ratio", 5.0, relative=True),
    )
    assert parse_allowances(" AUC : 0.02 , effect-size:0.5%, ") == (
        Allowance("auc", 0.02, relative=False),
        Allowance("effect_size", 0.5, relative=True),
    )
    assert parse_allowances("auc:0,ratio:100%") == (
        Allowance("auc", 0.0, relative=False),
        Allowance("comparative_ratio", 100.0, relative=True),
    )


def test_allowance_describe_and_allowed():
    assert Allowance("auc", 0.02, relative=False).describe() == "AUC may fall at most 0.02"
    assert (
        Allowance("comparative_ratio", 5.0, relative=True).describe()
        == "comparative ratio may fall at most 5% of the baseline"
    )
    assert Allowance("auc", 5, relative=True).allowed(0.5) == pytest.approx(0.025)
    assert Allowance("auc", 0.05, relative=False).allowed(0.5) == 0.05
    assert Allowance("separation", 10, relative=True).allowed(-0.2) == pytest.approx(0.02)
