"""Bootstrap intervals, paired deltas and effective length (pytest_niah.measure.stats)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.measure.stats import (
    METRICS,
    Interval,
    QuestionScores,
    bootstrap_intervals,
    effective_length,
    paired_bootstrap_delta,
    point_metrics,
    resample_counts,
    weighted_metrics,
)


def question(group_id, positives, negatives, controls=None, normalized=None):
    positives = np.asarray(positives, dtype=float)
    return QuestionScores(
        group_id=group_id,
        positives=positives,
        controls=np.zeros_like(positives) if controls is None else np.asarray(controls),
        negatives=np.asarray(negatives, dtype=float),
        normalized=positives if normalized is None else np.asarray(normalized, dtype=float),
    )


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


# -- QuestionScores -------------------------------------------------------------------------


def test_question_scores_coerces_to_float_arrays():
    q = question("a", [1, 2], [0])
    assert q.positives.dtype == float and q.negatives.dtype == float


def test_question_scores_rejects_mismatched_case_arrays():
    with pytest.raises(ValueError, match="one value per case"):
        question("a", [0.1, 0.2], [0.0], controls=[0.0])
    with pytest.raises(ValueError, match="one value per case"):
        question("a", [0.1, 0.2], [0.0], normalized=[0.5, 0.5, 0.5])


# -- point_metrics --------------------------------------------------------------------------


def hand_built():
    a = question(
        "a",
        positives=[0.6, 0.4],
        controls=[0.5, 0.4],  # one win, one tie
        negatives=[0.5, 0.3, math.nan],  # NaN negatives are dropped
        normalized=[1.2, math.nan],
    )
    b = question(
        "b",
        positives=[0.2, 0.3, 0.1],
        controls=[0.3, 0.1, 0.2],  # one win
        negatives=[0.25, 0.05],
        normalized=[0.4, 0.6, 0.2],
    )
    return [a, b]


def test_point_metrics_equals_a_direct_computation():
    got = point_metrics(hand_built())
    # a: pairs (0.6>0.5, 0.6>0.3, 0.4<0.5, 0.4>0.3) -> 3/4; b: 0.2<0.25,0.2>0.05,
    # 0.3>0.25,0.3>0.05, 0.1<0.25,0.1>0.05 -> 4/6.
    assert got["auc"] == pytest.approx((3 / 4 + 4 / 6) / 2)
    sep_a = 0.5 - 0.4
    sep_b = 0.2 - 0.15
    assert got["separation"] == pytest.approx((sep_a + sep_b) / 2)
    # Pooled SD (ddof=1): a: var(pos)=0.02, var(neg)=0.02 -> 0.1414; b: var(pos)=0.01,
    # var(neg)=0.02 -> sqrt((2*0.01 + 1*0.02)/3).
    d_a = sep_a / math.sqrt(0.02)
    d_b = sep_b / math.sqrt((2 * 0.01 + 0.02) / 3)
    assert got["effect_size"] == pytest.approx((d_a + d_b) / 2)
    assert got["comparative_ratio"] == pytest.approx((1 + 0.5 + 1) / 5)
    assert got["normalized"] == pytest.approx((1.2 + 0.4 + 0.6 + 0.2) / 4)
    assert tuple(got) == METRICS


def test_point_metrics_of_a_subset_and_of_nothing():
    assert point_metrics(hand_built(), ["separation"]).keys() == {"separation"}
    assert all(math.isnan(v) for v in point_metrics([]).values())
    with pytest.raises(ValueError, match="unknown metrics"):
        point_metrics(hand_built(), ["accuracy"])


def test_per_question_metrics_skip_undefined_questions():
    no_negatives = question("c", [0.9], [math.nan])
    got = point_metrics([*hand_built(), no_negatives])
    assert got["auc"] == pytest.approx(point_metrics(hand_built())["auc"])


# -- weighted_metrics / resample_counts -----------------------------------------------------

tie_prone = st.sampled_from([0.0, 0.1, 0.2, 0.5, math.nan])
finite = st.sampled_from([0.0, 0.1, 0.2, 0.5])


@st.composite
def questions_strategy(draw):
    out = []
    for i in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 4))
        out.append(
            question(
                f"g{i}",
                positives=draw(st.lists(finite, min_size=n, max_size=n)),
                controls=draw(st.lists(finite, min_size=n, max_size=n)),
                negatives=draw(st.lists(tie_prone, min_size=0, max_size=4)),
                normalized=draw(st.lists(tie_prone, min_size=n, max_size=n)),
            )
        )
    return out


def assert_same(got, expected):
    for name in expected:
        assert got[name] == pytest.approx(expected[name], nan_ok=True, abs=1e-12), name


@given(questions=questions_strategy(), seed=st.integers(0, 2**16))
def test_weighted_metrics_equal_point_metrics_of_the_resampled_list(questions, seed):
    counts = resample_counts(len(questions), 3, seed)
    counts = np.vstack([np.ones(len(questions), dtype=int), counts])
    replicates = weighted_metrics(questions, counts)
    for b, row in enumerate(counts):
        drawn = [q for q, c in zip(questions, row, strict=True) for _ in range(c)]
        assert_same({m: replicates[m][b] for m in METRICS}, point_metrics(drawn))


def test_resample_counts_draw_n_items_per_resample_deterministically():
    counts = resample_counts(7, 50, seed=3)
    assert counts.shape == (50, 7)
    assert (counts.sum(axis=1) == 7).all()
    np.testing.assert_array_equal(counts, resample_counts(7, 50, seed=3))
    assert not np.array_equal(counts, resample_counts(7, 50, seed=4))


def test_weighted_metrics_reject_counts_of_the_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        weighted_metrics(hand_built(), np.ones((3, 5)))


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
    for name, interval in first.items():
        assert isinstance(interval, Interval) and interval.metric == name
        assert interval.point == points[name]
        assert interval.low <= interval.point <= interval.high


def test_bootstrap_of_a_single_question_has_nan_bounds():
    (q,) = simulate(np.random.default_rng(2), 1)
    for interval in bootstrap_intervals([q], n_resamples=50).values():
        assert math.isfinite(interval.point)
        assert math.isnan(interval.low) and math.isnan(interval.high)


def test_bootstrap_rejects_bad_arguments():
    questions = hand_built()
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_intervals(questions, n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_intervals(questions, confidence=1.0)


# -- paired_bootstrap_delta -----------------------------------------------------------------


@pytest.mark.parametrize("metric", METRICS)
def test_paired_delta_of_identical_runs_is_exactly_zero(metric):
    questions = simulate(np.random.default_rng(3), 10)
    delta = paired_bootstrap_delta(questions, questions, metric=metric, n_resamples=200)
    assert (delta.point, delta.low, delta.high) == (0.0, 0.0, 0.0)


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
    delta = paired_bootstrap_delta(current, baseline, metric=metric, n_resamples=300)
    assert 0 < delta.low <= delta.point <= delta.high


def test_paired_delta_uses_only_shared_groups_whatever_their_order():
    rng = np.random.default_rng(5)
    baseline = simulate(rng, 10)
    current = simulate(rng, 10)
    extra = question("only-current", [9.0], [0.0])
    a = paired_bootstrap_delta(current, baseline, metric="separation", n_resamples=100)
    b = paired_bootstrap_delta(
        [extra, *reversed(current)], baseline, metric="separation", n_resamples=100
    )
    assert a == b


def test_paired_delta_with_fewer_than_two_shared_groups_has_nan_bounds():
    (q,) = simulate(np.random.default_rng(6), 1)
    delta = paired_bootstrap_delta([q], [q], metric="auc")
    assert delta.point == 0.0 and math.isnan(delta.low) and math.isnan(delta.high)


def test_paired_delta_rejects_repeated_groups_and_unknown_metrics():
    q = hand_built()
    with pytest.raises(ValueError, match="twice"):
        paired_bootstrap_delta([*q, q[0]], q, metric="auc")
    with pytest.raises(ValueError, match="unknown metrics"):
        paired_bootstrap_delta(q, q, metric="recall")


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
