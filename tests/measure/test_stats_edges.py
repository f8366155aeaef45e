"""The smallest sizes the bootstrap accepts (pytest_niah.measure.stats), found by mutation testing.

One resample, two resamples, exactly two paired questions, no items at all: each gives
intervals, not NaN or an error, and the standard error is defined from two replicates on.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from pytest_niah.measure.metrics import QuestionScores, weighted_metrics
from pytest_niah.measure.stats import (
    Interval,
    bootstrap_intervals,
    effective_length,
    paired_bootstrap_delta,
    resample_counts,
)


def question(group_id: str, positives, negatives) -> QuestionScores:
    positives = np.asarray(positives, dtype=float)
    return QuestionScores(
        group_id=group_id,
        positives=positives,
        controls=np.zeros_like(positives),
        unread=np.zeros(positives.size, bool),
        negatives=np.asarray(negatives, dtype=float),
        normalized=positives,
    )


QUESTIONS = [
    question("a", [0.6, 0.4], [0.5, 0.3]),
    question("b", [0.2, 0.3, 0.1], [0.25, 0.05]),
    question("c", [0.9, 0.8], [0.1, 0.7]),
]


def test_resample_counts_of_no_items_has_no_columns():
    counts = resample_counts(0, 5, seed=0)
    assert counts.shape == (5, 0)
    # Every resample draws each of n items n times in all.
    assert (resample_counts(4, 6, seed=1).sum(axis=1) == 4).all()


def test_one_resample_is_allowed_and_gives_its_replicate_as_both_bounds():
    with warnings.catch_warnings():
        # A single replicate has no spread: NaN standard error, without a numpy warning.
        warnings.simplefilter("error")
        interval = bootstrap_intervals(
            QUESTIONS, metric_names=["separation"], n_resamples=1, seed=4
        )
    (replicate,) = weighted_metrics(QUESTIONS, resample_counts(3, 1, 4), ["separation"])[
        "separation"
    ]
    got = interval["separation"]
    assert got.low == got.high == pytest.approx(replicate)
    assert math.isnan(got.se) and got.groups == 3


def test_two_resamples_give_a_standard_error():
    interval = bootstrap_intervals(QUESTIONS, metric_names=["separation"], n_resamples=2, seed=2)
    replicates = weighted_metrics(QUESTIONS, resample_counts(3, 2, 2), ["separation"])["separation"]
    assert replicates[0] != replicates[1]  # the seed draws two different resamples
    got = interval["separation"]
    assert got.se == pytest.approx(float(np.std(replicates, ddof=1)))
    assert got.low == pytest.approx(replicates.min() + 0.025 * np.ptp(replicates))


def test_exactly_two_shared_questions_give_a_paired_interval():
    current = QUESTIONS[:2]
    baseline = [question(q.group_id, q.positives - 0.1, q.negatives) for q in current]
    delta = paired_bootstrap_delta(current, baseline, metric="separation", n_resamples=50, seed=0)
    assert delta.groups == 2
    assert delta.point == pytest.approx(0.1)
    # Every resample shifts by the same 0.1, so the interval is that point.
    assert delta.low == pytest.approx(0.1) and delta.high == pytest.approx(0.1)
    one = paired_bootstrap_delta(current, baseline, metric="separation", n_resamples=1, seed=0)
    assert one.low == pytest.approx(0.1) and math.isnan(one.se)


def test_a_length_keeping_exactly_the_required_share_of_auc_passes():
    # "keeps at least keep of the shortest length's AUC": 0.75 of 1.0 is enough.
    assert effective_length([128, 256], [1.0, 0.75], [0.9, 0.6], keep=0.75) == 256
    assert effective_length([128, 256], [1.0, 0.74], [0.9, 0.6], keep=0.75) == 128


def test_an_interval_is_an_immutable_value_with_no_groups_by_default():
    interval = Interval("auc", 0.7, 0.6, 0.8)
    assert interval.groups == 0 and math.isnan(interval.se)
    assert interval.width == pytest.approx(0.2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        interval.low = 0.0  # type: ignore[misc]
