"""Three-state verdicts of the gates (pytest_niah.measure.verdicts), on synthetic intervals."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import (
    FAILING,
    MDE_Z,
    PASSING,
    UNPAIRED,
    Verdict,
    compare_verdict,
    groups_to_resolve,
    mde,
    minimum_verdict,
)
from pytest_niah.report.terminal import verdict_message

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
    # Improvements pass, and so does a drop of exactly the allowance.
    assert compare_verdict(change(0.05, 0.01, 0.09), 0.0).state == "within allowance"
    assert compare_verdict(change(-0.02, -0.02, 0.0), 0.02).state == "within allowance"


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
    assert "no interval" in v.reason
    assert "--niah-bootstrap" in v.resolve
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
    assert "no interval" in v.reason and "--niah-bootstrap" in v.resolve


def test_a_comparison_of_zero_paired_groups_is_an_error_whatever_the_policy():
    # Found: a length the two runs share no cell of was "inconclusive", and
    # --niah-inconclusive=pass passed it: a comparison of nothing passed a strict gate.
    nothing = Verdict(
        kind="comparison",
        metric="auc",
        state="inconclusive",
        point=NAN,
        low=NAN,
        high=NAN,
        limit=0.02,
        mde=NAN,
        groups=0,
        past_limit=True,
        reason="no cell of this arm, scoring and length is paired with the baseline",
    )
    assert nothing.state == UNPAIRED == "no paired cells"
    assert set(outcomes(nothing).values()) == {"fail"}
    message = verdict_message("--niah-compare-fail", nothing)
    assert message.startswith("--niah-compare-fail: AUC not compared: no paired cells (no cell")
    assert "different --niah-lengths or --niah-groups" in message
    assert "an error whatever --niah-inconclusive says" in message
    # One paired group is a comparison (inconclusive: no interval), and a minimum gate
    # without an interval stays inconclusive.
    assert compare_verdict(change(-0.01, NAN, NAN, se=NAN, groups=1), 0.02).state == "inconclusive"
    assert minimum_verdict(change(0.9, NAN, NAN, se=NAN, groups=0), 0.6).state == "inconclusive"


def test_states_partition_into_failing_passing_and_inconclusive():
    assert {"regressed", "below threshold", "no paired cells"} == FAILING
    assert {"within allowance", "meets threshold"} == PASSING


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
