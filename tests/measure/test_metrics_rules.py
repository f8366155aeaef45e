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
