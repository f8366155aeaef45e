"""Rules of measure/metrics.py that mutants found unchecked, beside test_metrics.py."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from pytest_niah.measure.metrics import (
    QuestionScores,
    cohens_d,
    pooled_sd,
    position_effects,
    separation,
    weighted_metrics,
)


def test_a_spread_of_float_dust_on_large_scores_is_no_spread():
    # Found (mutation, metrics.py:120 `1e-12 * scale` -> `1e-12 / scale`): "no spread" is
    # judged relative to the scores' size: one ulp apart at 1e6 (about 1e-10) is float dust,
    # not a difference to standardise by.
    dust = np.nextafter(1e6, 2e6)
    assert math.isnan(cohens_d([1e6, 1e6, dust], [1e6, 1e6, 1e6]))
    assert not math.isnan(cohens_d([1e6, 1e6, 1e6 + 1.0], [1e6, 1e6, 1e6]))  # a real spread


def test_a_resample_that_draws_no_question_is_undefined_without_a_warning():
    # Found (mutation, metrics.py:286 `where=den > 0` -> `>= 0`): a metric over no drawn
    # question is NaN, and computing it divides nothing by zero (no RuntimeWarning).
    questions = [
        QuestionScores(
            group_id=g,
            positives=np.array([0.9, 0.8]),
            controls=np.zeros(2),
            unread=np.zeros(2, bool),
            negatives=np.array([0.1, 0.2, 0.3]),
            normalized=np.array([0.9, 0.8]),
        )
        for g in ("a", "b")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = weighted_metrics(questions, np.array([[0, 0], [1, 1], [1, 0]]))
    # Found (mutation, metrics.py:286 `den > 0` -> `den > 1`): one question drawn once counts.
    assert all(math.isnan(v[0]) and not np.isnan(v[1:]).any() for v in out.values())
    with pytest.raises(dataclasses.FrozenInstanceError):  # metrics.py:181: a frozen value
        questions[0].group_id = "z"  # type: ignore[misc]


@pytest.mark.parametrize("empty", ["positives", "negatives"])
def test_a_question_without_cases_or_controls_is_undefined_without_a_warning(empty):
    # Found (mutation, metrics.py:213 the empty check deleted): with no scored case or no
    # finite control, every per-question figure is NaN, and no empty mean is taken.
    arrays = {"positives": [0.9, 0.8], "negatives": [0.1, math.nan]}
    arrays[empty] = [] if empty == "positives" else [math.nan]
    cases = len(arrays["positives"])
    question = QuestionScores(
        group_id="g",
        positives=np.array(arrays["positives"]),
        controls=np.full(cases, 0.5),
        unread=np.zeros(cases, dtype=bool),
        negatives=np.array(arrays["negatives"]),
        normalized=np.full(cases, 0.1),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figures = question.per_question()
    assert figures and all(math.isnan(v) for v in figures.values())


@pytest.mark.parametrize("empty", ["positives", "negatives"])
def test_an_empty_side_has_no_separation_or_effect_size_and_takes_no_empty_mean(empty):
    # Found (mutation sweep mutA, metrics.py:88 and :111, each empty-side check deleted or a
    # clause dropped): with no positive or no negative score, both figures are NaN, and no
    # mean of an empty array is taken (numpy would warn).
    sides = {"positives": [0.9, 0.8, 0.7], "negatives": [0.1, 0.2, 0.4]}
    sides[empty] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(separation(sides["positives"], sides["negatives"]))
        assert math.isnan(cohens_d(sides["positives"], sides["negatives"]))


def test_a_pooled_spread_needs_three_scores_even_on_one_side():
    # Found (mutation sweep mutA, metrics.py:98 the `n1 + n2 < 3` check deleted): two scores
    # on one side and none on the other have one degree of freedom left; the rule still says
    # undefined, and one score on each side (no degree of freedom) is no division by zero.
    assert math.isnan(pooled_sd([0.2, 0.4], []))
    assert math.isnan(pooled_sd([], [0.2, 0.4]))
    assert math.isnan(pooled_sd([0.2], [0.4]))
    assert pooled_sd([0.2, 0.4], [0.3]) == pytest.approx(math.sqrt(0.02 / 1))
    assert pooled_sd([0.3], [0.2, 0.4]) == pytest.approx(math.sqrt(0.02 / 1))  # and :101


def test_unread_flags_given_as_a_list_or_as_zeros_and_ones_read_as_flags():
    # Found (mutation sweep mutA, metrics.py:204 the conversion of `unread` deleted): the
    # flags may come as a plain list or as 0/1; they are read as booleans, so an unread
    # case ties (0.5) and contributes no separation, the same as with a bool array.
    def question(unread: object) -> QuestionScores:
        return QuestionScores(
            group_id="g",
            positives=np.array([0.9, 0.3]),
            controls=np.array([0.1, 0.3]),
            unread=unread,  # type: ignore[arg-type]
            negatives=np.array([0.2, 0.4]),
            normalized=np.array([0.9, 0.3]),
        )

    expected = question(np.array([False, True]))
    for given in ([False, True], np.array([0, 1]), [[0], [1]]):
        q = question(given)
        assert q.unread.dtype == bool and q.unread.shape == (2,)
        assert q.per_question() == expected.per_question()
        assert q.ratio_wins() == expected.ratio_wins() == 1.5


def test_counts_of_one_dimension_are_refused_naming_the_shape_expected():
    # Found (mutation sweep mutA, metrics.py:260 the `ndim != 2` clause dropped): a flat
    # count vector is a clear error naming the shape wanted, not an IndexError.
    question = QuestionScores("g", [0.9], [0.1], [False], [0.2, 0.4], [0.9])
    with pytest.raises(ValueError, match=r"counts must have shape \(n, 1\), got \(1,\)"):
        weighted_metrics([question], np.array([1]))
    with pytest.raises(ValueError, match=r"got \(1, 1, 1\)"):
        weighted_metrics([question], np.ones((1, 1, 1)))


def test_below_unit_scores_a_spread_counts_from_a_millionth_of_a_millionth():
    # Found (mutation sweep mutA, metrics.py:118 the scale's floor 1.0 -> 2.0): for scores of
    # size 1 or less, "no spread" means a pooled standard deviation of at most 1e-12; above
    # it the effect size is a number.
    def spread_of(d: float) -> float:
        return math.sqrt(d * d * 2 / 3 / 4)  # pos [0, 0, d], neg [0, 0, 0]: 4 degrees of freedom

    for d, defined in ((4e-12, True), (2e-12, False)):
        assert (spread_of(d) > 1e-12) is defined
        effect = cohens_d([0.0, 0.0, d], [0.0, 0.0, 0.0])
        assert math.isfinite(effect) is defined


def test_position_effects_are_a_frozen_value():
    # Found (mutation sweep mutA, metrics.py:125 frozen=True -> False).
    effects = position_effects([0.0, 0.5, 1.0], [0.3, 0.2, 0.1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        effects.slope = 0.0  # type: ignore[misc]


def test_needles_all_at_one_position_have_no_position_effect_whatever_the_scores():
    # Found (mutation sweep mutA, metrics.py:151 `np.ptp(x) > 0` -> `>= 0`): with no spread
    # of positions there is no correlation and no slope to fit (NaN both), not scipy's error.
    effects = position_effects([0.5, 0.5, 0.5], [0.1, 0.2, 0.4])
    assert math.isnan(effects.pearson_r) and math.isnan(effects.slope)
    assert effects.middle == pytest.approx(0.7 / 3)


@pytest.mark.parametrize(
    "scores",
    [
        [0.5, 0.5, 0.5 + 1e-16],  # equal up to rounding: scipy's NearConstantInputWarning
        [1e155, 0.0, 2e155],  # past any cosine: the fit's sums overflow (RuntimeWarning)
    ],
)
def test_position_effects_of_awkward_scores_warn_nothing(scores):
    # Found (mutation sweep mutA, metrics.py:154 and :155, a warning filter deleted): the
    # figures come back quietly; a warning in a pytest run would read as a problem of the run.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effects = position_effects([0.0, 0.5, 1.0], scores)
    assert effects.pearson_r == pytest.approx(effects.pearson_r)  # a number, not NaN


def test_an_empty_side_adds_nothing_to_the_pooled_spread():
    # Found (mutation sweep mutA, metrics.py:100 either `else 0.0` -> `1.0`): the pooled
    # spread of three scores and none is their own sample standard deviation.
    assert pooled_sd([0.2, 0.4, 0.6], []) == pytest.approx(0.2)
    assert pooled_sd([], [0.2, 0.4, 0.6]) == pytest.approx(0.2)


def test_two_positions_of_equal_scores_have_a_flat_slope_and_no_correlation():
    # Found (mutation sweep mutA, metrics.py:159 `x.size >= 2` -> `> 2`): two needle positions
    # are enough for a slope; equal scores there give slope 0 and an undefined r.
    effects = position_effects([0.0, 1.0], [0.4, 0.4])
    assert effects.slope == 0.0 and math.isnan(effects.pearson_r)
    assert math.isnan(position_effects([0.5], [0.4]).slope)  # one position: no slope at all


def test_a_spread_of_exactly_the_floor_is_still_no_spread():
    # Found (mutation sweep mutA, metrics.py:120 `sd <= 1e-12 * scale` -> `<`): the floor is
    # inclusive. Here the pooled spread is exactly 1e-12 in floating point: (-a)^2 + a^2 over
    # two degrees of freedom is a^2, whose square root is a.
    a = 1e-12
    assert pooled_sd([-a, a], [0.0, 0.0]) == a
    assert math.isnan(cohens_d([-a, a], [0.0, 0.0]))
