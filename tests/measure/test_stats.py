"""Bootstrap intervals, paired deltas and effective length (pytest_niah.measure.stats)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_niah.measure.metrics import METRICS, QuestionScores, point_metrics, weighted_metrics
from pytest_niah.measure.stats import (
    CONFIDENCE,
    Interval,
    bootstrap_intervals,
    effective_length,
    paired_bootstrap_delta,
    resample_counts,
)


def question(group_id, positives, negatives, controls=None, normalized=None, unread=None):
    positives = np.asarray(positives, dtype=float)
    return QuestionScores(
        group_id=group_id,
        positives=positives,
        controls=np.zeros_like(positives) if controls is None else np.asarray(controls),
        unread=np.zeros(positives.size, bool) if unread is None else np.asarray(unread, bool),
        negatives=np.asarray(negatives, dtype=float),
        normalized=positives if normalized is None else np.asarray(normalized, dtype=float),
    )


def hand_built():
    return [
        question("a", [0.6, 0.4], [0.5, 0.3], controls=[0.5, 0.4]),
        question("b", [0.2, 0.3, 0.1], [0.25, 0.05], controls=[0.3, 0.1, 0.2]),
    ]


def simulate(rng, n_questions, *, mean_mu=0.5, sd_mu=0.3, n_pos=6, n_neg=20):
    """Questions with separation of expectation ``mean_mu``.

    Positives ~ N(mu_q, 1) with mu_q ~ N(mean_mu, sd_mu); negatives ~ N(0, 1).
    """
    out = []
    for i in range(n_questions):
        mu = rng.normal(mean_mu, sd_mu)
        pos = rng.normal(mu, 1.0, n_pos)
        neg = rng.normal(0.0, 1.0, n_neg)
        out.append(question(f"g{i:03d}", pos, neg, controls=neg[:n_pos], normalized=pos / 0.5))
    return out


# -- bootstrap_intervals --------------------------------------------------------------------


def test_bootstrap_covers_the_true_separation_near_the_nominal_rate():
    rng = np.random.default_rng(20240601)
    covered = 0
    for seed in range(200):
        questions = simulate(rng, 30)
        interval = bootstrap_intervals(
            questions, metric_names=["separation"], n_resamples=300, seed=seed
        )["separation"]
        covered += interval.low <= 0.5 <= interval.high
    assert 0.90 <= covered / 200 <= 0.99


def test_bootstrap_width_shrinks_like_one_over_root_n():
    rng = np.random.default_rng(7)
    widths = {}
    for n in (8, 32, 128):
        runs = [
            bootstrap_intervals(
                simulate(rng, n), metric_names=["separation"], n_resamples=300, seed=s
            )["separation"].width
            for s in range(30)
        ]
        widths[n] = float(np.mean(runs))
    assert widths[8] > widths[32] > widths[128]
    # Quadrupling the questions halves the width; small samples read a little narrow.
    assert 1.5 < widths[8] / widths[32] < 2.8
    assert 1.6 < widths[32] / widths[128] < 2.5


def test_bootstrap_intervals_contain_the_point_and_are_deterministic():
    questions = simulate(np.random.default_rng(1), 12)
    first = bootstrap_intervals(questions, n_resamples=200, seed=5)
    assert first == bootstrap_intervals(questions, n_resamples=200, seed=5)
    assert first != bootstrap_intervals(questions, n_resamples=200, seed=6)
    points = point_metrics(questions)
    assert tuple(first) == METRICS
    for name, interval in first.items():
        assert isinstance(interval, Interval) and interval.metric == name
        assert interval.point == points[name]
        assert interval.low <= interval.point <= interval.high
        assert interval.groups == 12
        assert interval.se > 0


def test_bootstrap_interval_is_the_percentiles_and_se_the_sd_of_the_replicates():
    questions = simulate(np.random.default_rng(8), 9)
    interval = bootstrap_intervals(questions, metric_names=["auc"], n_resamples=400, seed=11)["auc"]
    replicates = weighted_metrics(questions, resample_counts(9, 400, 11), ["auc"])["auc"]
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(replicates, [alpha, 1 - alpha])
    assert (interval.low, interval.high) == (low, high)
    assert interval.se == pytest.approx(np.std(replicates, ddof=1), rel=1e-12)
    assert interval.width == interval.high - interval.low


def test_bootstrap_drops_resamples_where_a_metric_is_undefined():
    # Question "b" has no negatives: a resample drawing only "b" has no AUC.
    questions = [question("a", [0.6, 0.4], [0.5, 0.3]), question("b", [0.9], [])]
    interval = bootstrap_intervals(questions, metric_names=["auc"], n_resamples=200, seed=0)
    assert interval["auc"].point == 0.75
    assert interval["auc"].low == interval["auc"].high == 0.75


def test_bootstrap_of_a_single_question_has_nan_bounds():
    (q,) = simulate(np.random.default_rng(2), 1)
    for interval in bootstrap_intervals([q], n_resamples=50, seed=0).values():
        assert math.isfinite(interval.point)
        assert math.isnan(interval.low) and math.isnan(interval.high)
        assert math.isnan(interval.se) and interval.groups == 1


def test_bootstrap_rejects_bad_arguments():
    questions = hand_built()
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_intervals(questions, n_resamples=0, seed=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_intervals(questions, n_resamples=10, seed=0, confidence=1.0)


# -- paired_bootstrap_delta -----------------------------------------------------------------


@pytest.mark.parametrize("metric", METRICS)
def test_paired_delta_of_identical_runs_is_exactly_zero(metric):
    questions = simulate(np.random.default_rng(3), 10)
    delta = paired_bootstrap_delta(questions, questions, metric=metric, n_resamples=200, seed=0)
    assert (delta.point, delta.low, delta.high, delta.se) == (0.0, 0.0, 0.0, 0.0)
    assert delta.groups == 10


@pytest.mark.parametrize("metric", ["auc", "separation", "effect_size", "comparative_ratio"])
def test_paired_delta_detects_a_shift_of_every_current_score(metric):
    rng = np.random.default_rng(4)
    baseline = simulate(rng, 20, mean_mu=0.2)
    current = [
        question(
            q.group_id,
            q.positives + 0.4 + rng.normal(0, 0.1, q.positives.size),
            q.negatives,
            q.controls,
            q.normalized,
        )
        for q in baseline
    ]
    delta = paired_bootstrap_delta(current, baseline, metric=metric, n_resamples=300, seed=0)
    assert 0 < delta.low <= delta.point <= delta.high


def test_pairing_cancels_question_difficulty():
    # Questions differ widely in difficulty; the current run adds a small, steady gain to
    # each. Unpaired intervals would be as wide as the spread of difficulty; paired, narrow.
    rng = np.random.default_rng(9)
    baseline = simulate(rng, 20, sd_mu=1.0)
    current = [
        question(q.group_id, q.positives + 0.05, q.negatives, q.controls, q.normalized)
        for q in baseline
    ]
    paired = paired_bootstrap_delta(current, baseline, metric="separation", n_resamples=300, seed=0)
    alone = bootstrap_intervals(baseline, metric_names=["separation"], n_resamples=300, seed=0)
    assert paired.point == pytest.approx(0.05)
    assert paired.width < alone["separation"].width / 10


def test_paired_delta_uses_only_shared_groups_whatever_their_order():
    rng = np.random.default_rng(5)
    baseline = simulate(rng, 10)
    current = simulate(rng, 10)
    extra = question("only-current", [9.0], [0.0])
    a = paired_bootstrap_delta(current, baseline, metric="separation", n_resamples=100, seed=0)
    b = paired_bootstrap_delta(
        [extra, *reversed(current)], baseline, metric="separation", n_resamples=100, seed=0
    )
    assert a == b
    assert a.groups == 10


def test_paired_delta_with_fewer_than_two_shared_groups_has_nan_bounds():
    (q,) = simulate(np.random.default_rng(6), 1)
    delta = paired_bootstrap_delta([q], [q], metric="auc", n_resamples=10, seed=0)
    assert delta.point == 0.0 and math.isnan(delta.low) and math.isnan(delta.high)
    assert math.isnan(delta.se) and delta.groups == 1
    none = paired_bootstrap_delta([q], [], metric="auc", n_resamples=10, seed=0)
    assert math.isnan(none.point) and none.groups == 0


def test_paired_delta_rejects_repeated_groups_and_unknown_metrics():
    q = hand_built()
    with pytest.raises(ValueError, match="twice"):
        paired_bootstrap_delta([*q, q[0]], q, metric="auc", n_resamples=10, seed=0)
    with pytest.raises(ValueError, match="unknown metric"):
        paired_bootstrap_delta(q, q, metric="recall", n_resamples=10, seed=0)


# -- effective_length -----------------------------------------------------------------------

LENGTHS = [128, 256, 512, 1024]


def test_effective_length_when_every_length_passes_is_the_longest():
    assert effective_length(LENGTHS, [0.9, 0.88, 0.85, 0.8], [0.8, 0.7, 0.7, 0.6]) == 1024


def test_effective_length_stops_before_the_first_failing_length():
    # 0.7 < 0.85 * 0.9
    assert effective_length(LENGTHS, [0.9, 0.88, 0.7, 0.8], [0.8, 0.7, 0.6, 0.6]) == 256


def test_effective_length_ignores_a_length_that_passes_again_after_a_failure():
    assert effective_length(LENGTHS, [0.9, 0.6, 0.9, 0.9], [0.8, 0.55, 0.8, 0.8]) == 128


def test_effective_length_is_none_when_the_shortest_fails():
    assert effective_length(LENGTHS, [0.9, 0.9, 0.9, 0.9], [0.45, 0.8, 0.8, 0.8]) is None
    assert effective_length([], [], []) is None


def test_effective_length_fails_a_lower_bound_at_chance():
    assert effective_length(LENGTHS, [0.9, 0.9, 0.9, 0.9], [0.8, 0.8, 0.5, 0.8]) == 256


def test_effective_length_fails_nan_and_sorts_by_length():
    assert effective_length(LENGTHS, [0.9, math.nan, 0.9, 0.9], [0.8] * 4) == 128
    shuffled = [1024, 128, 512, 256]
    auc = {128: 0.9, 256: 0.88, 512: 0.7, 1024: 0.9}
    assert effective_length(shuffled, [auc[n] for n in shuffled], [0.8] * 4) == 256


def test_effective_length_rejects_bad_input():
    with pytest.raises(ValueError, match="same size"):
        effective_length(LENGTHS, [0.9], [0.8])
    with pytest.raises(ValueError, match="repeated"):
        effective_length([128, 128], [0.9, 0.9], [0.8, 0.8])
