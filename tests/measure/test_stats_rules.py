"""Rules of measure/stats.py that mutants found unchecked, beside test_stats*.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_niah.measure.metrics import QuestionScores
from pytest_niah.measure.stats import bootstrap_intervals, paired_bootstrap_delta


def test_an_unknown_metric_is_refused_by_its_name_before_any_work():
    # Found (mutation, stats.py:102 the raise deleted): the metric is checked first, with
    # its own message naming it and the metrics there are (not the later computation's).
    with pytest.raises(ValueError, match=r"^unknown metric 'nope'; expected one of \("):
        paired_bootstrap_delta([], [], metric="nope", n_resamples=10, seed=0)
    with pytest.raises(ValueError, match=r"^unknown metric 'nope'; expected one of \("):
        paired_bootstrap_delta([], [], metric="nope", n_resamples=0, seed=0)


def test_a_metric_undefined_in_every_resample_has_no_bounds_not_an_error():
    # Found (mutation, stats.py:156 the empty-replicates check deleted): questions without
    # negatives leave the AUC undefined in every resample; its interval is NaN, not a crash.
    questions = [
        QuestionScores(
            group_id=g,
            positives=np.array([0.9, 0.8]),
            controls=np.zeros(2),
            unread=np.zeros(2, bool),
            negatives=np.array([]),
            normalized=np.array([0.9, 0.8]),
        )
        for g in ("a", "b", "c")
    ]
    interval = bootstrap_intervals(questions, n_resamples=20, seed=0, metric_names=["auc"])["auc"]
    assert math.isnan(interval.low) and math.isnan(interval.high) and math.isnan(interval.se)


@pytest.mark.parametrize(
    ("n_resamples", "confidence", "words"),
    [
        (0, 0.95, r"n_resamples must be >= 1, got 0"),
        (10, 1.0, r"confidence must be in \(0, 1\), got 1.0"),
        (10, 0.0, r"confidence must be in \(0, 1\), got 0.0"),
    ],
)
def test_a_paired_delta_checks_its_bootstrap_settings_even_with_too_few_questions(
    n_resamples, confidence, words
):
    # Found (mutation sweep mutA, stats.py:103 the check deleted): the paired delta refuses
    # a bad resample count or confidence up front, as the intervals do, also where no
    # resample would be drawn (fewer than two shared questions).
    with pytest.raises(ValueError, match=words):
        paired_bootstrap_delta(
            [], [], metric="auc", n_resamples=n_resamples, seed=0, confidence=confidence
        )
