"""Three-state verdicts of the gates (pytest_niah.measure.verdicts), on synthetic intervals."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.measure.resolve_advice import MDE_Z, groups_to_resolve, mde, no_interval
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdict_text import verdict_message
from pytest_niah.measure.verdicts import (
    FAILING,
    PASSING,
    UNPAIRED,
    compare_verdict,
    minimum_verdict,
)

POLICIES = ("auto", "fail", "warn", "pass")
NAN = math.nan


def change(point, low, high, *, se=0.01, groups=16, metric="auc"):
    return Interval(metric, point, low, high, se, groups)


def outcomes(verdict):
    return {policy: verdict.outcome(policy) for policy in POLICIES}


# -- comparison (found: --niah-compare-fail=auc:0.02 decided on the point delta alone) -------


def test_a_drop_past_the_allowance_with_the_whole_interval_below_zero_regressed():
    v = compare_verdict(change(-0.05, -0.08, -0.02), 0.02)
    assert (v.kind, v.metric, v.state) == ("comparison", "auc", "regressed")
    assert (v.point, v.low, v.high, v.limit, v.groups) == (-0.05, -0.08, -0.02, 0.02, 16)
    assert v.past_limit and v.reason == "" and v.resolve == ""
    assert set(outcomes(v).values()) == {"fail"}  # whatever the inconclusive policy


def test_an_interval_inside_the_allowance_is_within_allowance():
    v = compare_verdict(change(-0.01, -0.015, 0.005), 0.02)
    assert v.state == "within allowance" and not v.past_limit
    assert set(outcomes(v).values()) == {"pass"}
    # A drop of exactly the allowance passes, and so does a gain the interval is not sure of.
    assert compare_verdict(change(-0.02, -0.02, 0.0), 0.02).state == "within allowance"
    assert compare_verdict(change(0.05, -0.01, 0.09), 0.02).state == "within allowance"


def test_a_point_drop_within_the_allowance_is_not_a_pass_when_the_interval_reaches_past_it():
    # A point gate passed this (drop 0.01 <= 0.02); the interval cannot rule out 0.05.
    v = compare_verdict(change(-0.01, -0.05, 0.03), 0.02)
    assert v.state == "inconclusive" and not v.past_limit
    assert v.reason == "the change's interval reaches past the allowance"
    assert outcomes(v) == {"auto": "warn", "fail": "fail", "warn": "warn", "pass": "pass"}


def test_a_point_drop_past_the_allowance_is_not_a_confident_regression_when_zero_is_inside():
    # A point gate failed this (drop 0.025 > 0.02) as if certain; the interval holds 0.
    v = compare_verdict(change(-0.025, -0.06, 0.01), 0.02)
    assert v.state == "inconclusive" and v.past_limit
    # auto is exactly as strict as the point gate: it fails.
    assert outcomes(v) == {"auto": "fail", "fail": "fail", "warn": "warn", "pass": "pass"}


def test_a_change_without_an_interval_is_inconclusive_and_says_what_resolves_it():
    v = compare_verdict(change(-0.01, NAN, NAN, se=NAN, groups=1), 0.02)
    assert v.state == "inconclusive" and not v.past_limit
    assert v.reason == "no interval: 1 needle group"
    assert v.resolve == "use two or more needle groups (--niah-groups): an interval resamples them"
    assert math.isnan(v.mde)
    assert v.outcome("auto") == "warn"
    assert compare_verdict(change(-0.03, NAN, NAN, se=NAN), 0.02).outcome("auto") == "fail"


def test_a_metric_undefined_in_this_run_regressed():
    v = compare_verdict(change(NAN, NAN, NAN), 0.02)
    assert v.state == "regressed" and v.past_limit
    assert "undefined" in v.reason
    assert v.outcome("pass") == "fail"


def test_a_point_outside_its_own_interval_never_passes_a_gate_it_fails_by_point():
    # A percentile interval need not hold its point: the point decides for auto.
    v = compare_verdict(change(-0.03, -0.015, 0.01), 0.02)
    assert v.state == "inconclusive" and v.past_limit
    assert "outside its own interval" in v.reason
    assert v.outcome("auto") == "fail"
    m = minimum_verdict(change(0.58, 0.61, 0.7), 0.6)
    assert m.state == "inconclusive" and m.past_limit
    assert m.outcome("auto") == "fail"


# -- minimum (--niah-min-auc, --niah-min-ratio) ------------------------------------------------


def test_minimum_below_threshold_when_point_and_interval_are_below():
    v = minimum_verdict(change(0.55, 0.5, 0.58), 0.6)
    assert (v.kind, v.state, v.limit) == ("minimum", "below threshold", 0.6)
    assert v.past_limit and set(outcomes(v).values()) == {"fail"}


def test_minimum_meets_threshold_when_the_low_end_reaches_it():
    v = minimum_verdict(change(0.7, 0.6, 0.78), 0.6)
    assert v.state == "meets threshold" and not v.past_limit
    assert set(outcomes(v).values()) == {"pass"}


def test_minimum_straddled_is_inconclusive_and_auto_follows_the_point():
    above = minimum_verdict(change(0.62, 0.57, 0.67), 0.6)
    below = minimum_verdict(change(0.58, 0.55, 0.63), 0.6)
    for v in (above, below):
        assert v.state == "inconclusive"
        assert v.reason == "the interval straddles the threshold"
        assert "needle groups" in v.resolve
    assert (above.outcome("auto"), below.outcome("auto")) == ("warn", "fail")
    assert (above.outcome("fail"), below.outcome("warn"), above.outcome("pass")) == (
        "fail",
        "warn",
        "pass",
    )


def test_minimum_of_an_undefined_metric_is_below_threshold():
    v = minimum_verdict(change(NAN, NAN, NAN), 0.6)
    assert v.state == "below threshold" and "undefined" in v.reason


def test_minimum_without_an_interval_is_inconclusive():
    v = minimum_verdict(change(0.9, NAN, NAN, se=NAN, groups=0), 0.6)
    assert v.state == "inconclusive" and v.outcome("auto") == "warn"
    assert v.reason == "no interval: 0 needle groups" and "--niah-groups" in v.resolve
    bootstrap_off = minimum_verdict(change(0.9, NAN, NAN, se=NAN, groups=8), 0.6)
    assert bootstrap_off.reason == "no interval: bootstrap off"
    assert bootstrap_off.resolve == "turn the bootstrap on (--niah-bootstrap)"


def test_a_comparison_of_zero_paired_groups_is_an_error_whatever_the_policy():
    # Found: a length the two runs share no cell of was "inconclusive", and
    # --niah-inconclusive=pass passed it: a comparison of nothing passed a strict gate.
    for point in (NAN, 0.0, 0.5):  # whatever the numbers say, nothing was paired
        nothing = compare_verdict(change(point, point, point, groups=0), 0.02, paired_cells=0)
        assert nothing.state == UNPAIRED == "no paired cells"
        assert set(outcomes(nothing).values()) == {"fail"}
    nothing = compare_verdict(change(NAN, NAN, NAN, groups=0), 0.02, paired_cells=0, run_cells=12)
    message = verdict_message("--niah-compare-fail", nothing)
    assert message.startswith(
        "--niah-compare-fail: AUC not compared (paired 0 of 12 cells): no paired cells (no cell"
    )
    assert "different --niah-lengths or --niah-groups" in message
    assert "an error whatever --niah-inconclusive says" in message
    assert message.endswith("; compare with a baseline that measured it)")
    # One paired group is a comparison (inconclusive: no interval), and a minimum gate
    # without an interval stays inconclusive.
    assert compare_verdict(change(-0.01, NAN, NAN, se=NAN, groups=1), 0.02).state == "inconclusive"
    assert minimum_verdict(change(0.9, NAN, NAN, se=NAN, groups=0), 0.6).state == "inconclusive"


def test_states_partition_into_failing_passing_and_inconclusive():
    assert {"regressed", "below threshold", "no paired cells"} == FAILING
    assert {"improved", "within allowance", "meets threshold"} == PASSING


# -- never weaker than a point gate ------------------------------------------------------------

unit = st.floats(-1.0, 1.0, allow_nan=False)
maybe_nan = st.one_of(unit, st.just(NAN))


@given(
    point=maybe_nan,
    a=maybe_nan,
    b=maybe_nan,
    allowance=st.floats(0.0, 0.5),
    policy=st.sampled_from(POLICIES),
)
def test_auto_fails_every_drop_a_point_gate_fails_and_passes_only_what_it_passes(
    point, a, b, allowance, policy
):
    low, high = (a, b) if not a > b else (b, a)
    v = compare_verdict(change(point, low, high), allowance)
    point_gate_fails = not -point <= allowance
    assert v.past_limit == point_gate_fails
    if point_gate_fails:
        assert v.outcome("auto") == "fail"
        assert v.state not in PASSING
    if v.state == "within allowance":
        assert low >= -allowance and -point <= allowance
    if v.state == "regressed" and not math.isnan(point):
        assert high < 0 and -point > allowance
    if v.state in FAILING | PASSING:
        assert v.outcome(policy) == v.outcome("auto")  # the policy is for inconclusive only


@given(point=maybe_nan, a=maybe_nan, b=maybe_nan, threshold=st.floats(0.0, 1.0))
def test_auto_fails_every_value_a_point_minimum_fails(point, a, b, threshold):
    low, high = (a, b) if not a > b else (b, a)
    v = minimum_verdict(change(point, low, high), threshold)
    if not point >= threshold:
        assert v.outcome("auto") == "fail"
        assert v.state != "meets threshold"
    if v.state == "meets threshold":
        assert low >= threshold and point >= threshold
    if v.state == "below threshold" and not math.isnan(point):
        assert high < threshold


# -- minimum detectable effect ------------------------------------------------------------------


def test_mde_is_2_80_standard_errors():
    assert pytest.approx(2.80) == MDE_Z
    assert mde(0.01) == pytest.approx(0.028)
    assert math.isnan(mde(NAN)) and math.isnan(mde(math.inf))
    assert compare_verdict(change(0.0, -0.01, 0.01, se=0.005), 0.02).mde == pytest.approx(0.014)
    assert minimum_verdict(change(0.7, 0.65, 0.75, se=0.02), 0.6).mde == pytest.approx(0.056)


def test_groups_to_resolve_scales_the_groups_by_the_squared_mde_ratio():
    # MDE 0.028 at 16 groups; to detect 0.02: 16 * (0.028 / 0.02)^2 = 31.36 -> 32 groups.
    assert groups_to_resolve(16, 0.01, 0.02) == 32
    # MDE 0.056 at 10 groups; to detect 0.014: 10 * 16 = 160.
    assert groups_to_resolve(10, 0.02, 0.014) == 160
    # Already detectable: at least one group more.
    assert groups_to_resolve(16, 0.001, 0.5) == 17


@pytest.mark.parametrize(
    ("groups", "se", "effect"),
    [
        (0, 0.01, 0.02),
        (16, NAN, 0.02),
        (16, 0.01, 0.0),
        (16, 0.01, -0.1),
        (16, 0.01, NAN),
        (16, 0.01, 1e-300),  # overflowed: the point a hair's breadth from the threshold
    ],
)
def test_groups_to_resolve_is_none_when_nothing_can_resolve(groups, se, effect):
    assert groups_to_resolve(groups, se, effect) is None


def test_an_inconclusive_verdict_says_how_many_groups_would_resolve_it():
    v = compare_verdict(change(-0.01, -0.05, 0.03, se=0.01, groups=16), 0.02)
    assert v.resolve.startswith("about 32 needle groups (now 16) would resolve 0.02")
    m = minimum_verdict(change(0.62, 0.57, 0.67, se=0.01, groups=16), 0.6)
    # The gap to the threshold, 0.02: the same 32 groups.
    assert m.resolve.startswith("about 32 needle groups (now 16)")


def test_an_allowance_of_zero_is_not_blamed_on_a_missing_bootstrap():
    v = compare_verdict(change(-0.001, -0.01, 0.008, se=0.005, groups=16), 0.0)
    assert v.state == "inconclusive"
    assert "--niah-bootstrap" not in v.resolve
    assert "margin of 0" in v.resolve


def test_a_point_a_hairs_breadth_from_the_threshold_gives_a_verdict():
    v = minimum_verdict(change(5.7e-298, -1.0, 1.0), 0.0)
    assert v.state == "inconclusive" and "no number of needle groups" in v.resolve


def test_an_unknown_inconclusive_policy_is_an_error_not_a_pass():
    verdict = compare_verdict(Interval("auc", -0.01, -0.05, 0.03, 0.02, 10), 0.02)
    assert verdict.state == "inconclusive"
    with pytest.raises(ValueError, match="'lenient'"):
        verdict.outcome("lenient")


# -- improved (found: a +0.385 AUC gain read "within allowance") -------------------------------


def test_a_gain_whose_whole_interval_is_above_the_allowance_is_improved():
    v = compare_verdict(change(0.385, 0.26, 0.53), 0.02)
    assert v.state == "improved" and not v.past_limit and v.reason == v.resolve == ""
    assert set(outcomes(v).values()) == {"pass"}
    assert verdict_message("gate", v) == (
        "gate: AUC changed +0.385 [0.260, 0.530], allowed drop 0.020; MDE 0.028 at 16 groups: "
        "improved"
    )
    # A gain the interval is not sure of stays within allowance.
    assert compare_verdict(change(0.385, 0.01, 0.7), 0.02).state == "within allowance"


@pytest.mark.parametrize(
    ("point", "low", "high", "state"),
    [
        (0.05, 0.02, 0.09, "within allowance"),  # the low end exactly at +allowance
        (0.02, 0.03, 0.05, "within allowance"),  # the point exactly at +allowance
        (0.05, 0.021, 0.09, "improved"),
        (0.0201, 0.03, 0.05, "improved"),
    ],
)
def test_improved_needs_the_point_and_the_low_end_strictly_above_the_allowance(
    point, low, high, state
):
    assert compare_verdict(change(point, low, high), 0.02).state == state


# -- each boundary of the rules (a one-character change of a comparison fails one of these) ----


@pytest.mark.parametrize(
    ("point", "low", "high", "state", "past"),
    [
        (-0.05, -0.08, 0.0, "inconclusive", True),  # the high end at zero: not a sure drop
        (-0.05, -0.08, -1e-9, "regressed", True),
        (-0.02, -0.03, -0.01, "inconclusive", False),  # a drop of exactly the allowance
        (-0.0201, -0.03, -0.01, "regressed", True),
        (-0.02, -0.02, 0.0, "within allowance", False),  # low end exactly at -allowance
        (-0.02, -0.0201, 0.0, "inconclusive", False),
    ],
)
def test_comparison_boundaries(point, low, high, state, past):
    v = compare_verdict(change(point, low, high), 0.02)
    assert (v.state, v.past_limit) == (state, past)


def test_which_reason_an_inconclusive_comparison_gives_at_the_boundary():
    at = compare_verdict(change(-0.03, -0.02, 0.01), 0.02)  # low end exactly at -allowance
    assert at.reason == "the point estimate lies past the allowance, outside its own interval"
    past = compare_verdict(change(-0.03, -0.0201, 0.01), 0.02)
    assert past.reason == "the change's interval reaches past the allowance"


@pytest.mark.parametrize(
    ("point", "low", "high", "state", "past"),
    [
        (0.6, 0.6, 0.7, "meets threshold", False),  # point and low end exactly at it
        (0.5999, 0.6, 0.7, "inconclusive", True),
        (0.6, 0.5999, 0.7, "inconclusive", False),
        (0.55, 0.5, 0.6, "inconclusive", True),  # the high end exactly at it: not surely below
        (0.55, 0.5, 0.5999, "below threshold", True),
        (0.6, 0.5, 0.59, "inconclusive", False),  # the point exactly at it, above its interval
    ],
)
def test_minimum_boundaries(point, low, high, state, past):
    v = minimum_verdict(change(point, low, high), 0.6)
    assert (v.state, v.past_limit) == (state, past)


def test_which_reason_an_inconclusive_minimum_gives_at_the_boundary():
    at = minimum_verdict(change(0.58, 0.6, 0.7), 0.6)
    assert at.reason == "the point estimate lies below the threshold, outside its own interval"
    assert minimum_verdict(change(0.58, 0.5999, 0.7), 0.6).reason == (
        "the interval straddles the threshold"
    )


def test_one_missing_bound_is_no_interval():
    for low, high in ((-0.05, NAN), (NAN, 0.01)):
        assert compare_verdict(change(-0.01, low, high), 0.02).reason.startswith("no interval")


@pytest.mark.parametrize(
    ("groups", "why"),
    [(0, "0 needle groups"), (1, "1 needle group"), (2, "bootstrap off"), (16, "bootstrap off")],
)
def test_no_interval_says_why(groups, why):
    assert no_interval(groups) == why


def test_what_resolves_an_inconclusive_verdict_of_two_groups():
    v = compare_verdict(change(-0.01, -0.05, 0.03, se=0.01, groups=2), 0.02)
    assert v.resolve.startswith("about 4 needle groups (now 2) would resolve 0.02")
    without = compare_verdict(change(-0.01, -0.05, 0.03, se=NAN, groups=2), 0.02)
    assert without.resolve == "turn the bootstrap on (--niah-bootstrap)"


def test_groups_to_resolve_from_one_group():
    assert groups_to_resolve(1, 0.01, 0.028) == 2


# -- cells: how many of this run's cells a comparison paired (found: 56 of 840 read as better) -


def test_a_comparison_says_how_many_cells_it_paired():
    v = compare_verdict(change(-0.01, -0.015, 0.005), 0.02, paired_cells=560, run_cells=560)
    assert (v.state, v.paired_cells, v.run_cells) == ("within allowance", 560, 560)
    assert verdict_message("gate", v).startswith(
        "gate: AUC changed -0.010 [-0.015, 0.005] (paired 560 of 560 cells), allowed drop"
    )
    # A minimum gate has no pairing, and says none.
    m = minimum_verdict(change(0.7, 0.65, 0.75), 0.6)
    assert (m.paired_cells, m.run_cells) == (None, None) and "paired" not in verdict_message("", m)


@pytest.mark.parametrize(
    ("point", "low", "high"),
    [(-0.01, -0.015, 0.005), (0.3, 0.2, 0.4), (-0.01, -0.05, 0.03)],
    ids=["within-allowance", "improved", "inconclusive-that-warns"],
)
def test_a_minority_of_paired_cells_cannot_pass_and_auto_fails_it(point, low, high):
    v = compare_verdict(change(point, low, high), 0.02, paired_cells=56, run_cells=840)
    assert v.state == "inconclusive" and v.pairs_a_minority
    assert v.reason == (
        "only 56 of this run's 840 cells at this length are paired with the baseline: the "
        "others may hold a regression"
    )
    assert "--niah-save" in v.resolve
    assert outcomes(v) == {"auto": "fail", "fail": "fail", "warn": "warn", "pass": "pass"}
    assert "(paired 56 of 840 cells)" in verdict_message("gate", v)


def test_half_the_cells_is_not_a_minority():
    half = compare_verdict(change(-0.01, -0.015, 0.005), 0.02, paired_cells=420, run_cells=840)
    assert half.state == "within allowance" and not half.pairs_a_minority
    less = compare_verdict(change(-0.01, -0.015, 0.005), 0.02, paired_cells=419, run_cells=840)
    assert less.state == "inconclusive" and less.pairs_a_minority
    assert compare_verdict(
        change(-0.01, -0.015, 0.005), 0.02, paired_cells=1, run_cells=3
    ).state == ("inconclusive")
    assert compare_verdict(
        change(-0.01, -0.015, 0.005), 0.02, paired_cells=2, run_cells=3
    ).state == ("within allowance")


def test_a_clear_regression_on_a_minority_stays_a_regression():
    v = compare_verdict(change(-0.2, -0.3, -0.1), 0.02, paired_cells=56, run_cells=840)
    assert v.state == "regressed" and v.reason == ""


def test_a_baseline_without_the_metric_has_nothing_to_fall_from():
    v = compare_verdict(change(NAN, NAN, NAN), 0.02, baseline_undefined=True)
    assert (v.state, v.past_limit) == ("within allowance", False)
    assert v.reason == "undefined in the baseline: nothing to fall from"
    assert set(outcomes(v).values()) == {"pass"}


def test_an_unresolved_length_cannot_pass_even_when_improved():
    why = "no needle sits between the two windows"
    for point, low, high in ((-0.01, -0.015, 0.005), (0.3, 0.2, 0.4)):
        v = compare_verdict(change(point, low, high), 0.02, unresolved=why)
        assert (v.state, v.reason) == ("inconclusive", why)
        assert "--niah-positions" in v.resolve and v.outcome("auto") == "warn"
    assert compare_verdict(change(-0.2, -0.3, -0.1), 0.02, unresolved=why).state == "regressed"
