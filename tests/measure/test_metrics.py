"""The study's two-sample metrics (pytest_niah.measure.metrics) against reference computations.

Position effects are tested in test_position_effects.py, per-question scores and their
weighting in test_question_metrics.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu
from sklearn.metrics import roc_auc_score

from pytest_niah.measure import metrics
from pytest_niah.measure.metrics import (
    NORMALIZED_FLOOR,
    auc,
    cohens_d,
    comparative_ratio,
    nanmean,
    normalized_similarity,
    separation,
    wins,
)

# Any float but NaN/inf, mixed with a few fixed values so that ties are common.
any_float = st.floats(allow_nan=False, allow_infinity=False)
tie_prone = st.one_of(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0]), any_float)
score_lists = st.lists(tie_prone, min_size=1, max_size=40)
# Cosine-like scores for metrics whose arithmetic (means, variances) can overflow.
unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
unit_lists = st.lists(unit, min_size=1, max_size=40)


# -- auc ------------------------------------------------------------------------------------


@given(pos=score_lists, neg=score_lists)
def test_auc_agrees_with_mann_whitney_u_and_sklearn(pos, neg):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow inside scipy/sklearn diffs
        expected_u = mannwhitneyu(pos, neg).statistic / (len(pos) * len(neg))
        labels = [1] * len(pos) + [0] * len(neg)
        expected_sk = roc_auc_score(labels, pos + neg)
        got = auc(pos, neg)
    assert got == pytest.approx(expected_u, abs=1e-12)
    assert got == pytest.approx(expected_sk, abs=1e-12)
    assert 0.0 <= got <= 1.0


@given(
    pos=st.lists(st.integers(0, 3).map(lambda i: i / 4), min_size=1, max_size=40),
    neg=st.lists(st.integers(0, 3).map(lambda i: i / 4), min_size=1, max_size=40),
)
def test_auc_with_heavy_ties_counts_ties_half(pos, neg):
    pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
    assert auc(pos, neg) == pytest.approx(sum(pairs) / len(pairs), abs=1e-12)


def test_auc_known_values():
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1, 0.2], [0.9, 0.8]) == 0.0
    assert auc([0.5, 0.5], [0.5]) == 0.5
    assert auc([0.5, 0.3, 0.4], [0.35, 0.2]) == pytest.approx(5 / 6)


@pytest.mark.parametrize(("pos", "neg"), [([], [0.1]), ([0.1], []), ([], [])])
def test_auc_of_an_empty_side_is_nan(pos, neg):
    assert math.isnan(auc(pos, neg))


# -- separation -----------------------------------------------------------------------------


@given(pos=unit_lists, neg=unit_lists)
def test_separation_is_the_difference_of_means(pos, neg):
    expected = sum(pos) / len(pos) - sum(neg) / len(neg)
    assert separation(pos, neg) == pytest.approx(expected, abs=1e-12)


def test_separation_of_an_empty_side_is_nan():
    assert math.isnan(separation([], [0.1]))
    assert math.isnan(separation([0.1], []))


# -- cohens_d -------------------------------------------------------------------------------


def pooled_sd(pos, neg) -> float:
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    n1, n2 = pos.size, neg.size
    ss1 = (n1 - 1) * np.var(pos, ddof=1) if n1 > 1 else 0.0
    ss2 = (n2 - 1) * np.var(neg, ddof=1) if n2 > 1 else 0.0
    return math.sqrt((ss1 + ss2) / (n1 + n2 - 2))


def direct_d(pos, neg) -> float:
    return (np.mean(pos) - np.mean(neg)) / pooled_sd(pos, neg)


@given(pos=unit_lists, neg=unit_lists)
def test_cohens_d_agrees_with_pooled_sd_formula(pos, neg):
    assume(len(pos) + len(neg) >= 3)
    assume(pooled_sd(pos, neg) > 1e-9)
    assert cohens_d(pos, neg) == pytest.approx(direct_d(pos, neg), rel=1e-9, abs=1e-9)


def test_cohens_d_known_value():
    # pos var 0.01 (n=3), neg var 0.01125 (n=2): pooled = sqrt((2*.01 + .01125) / 3)
    expected = 0.125 / math.sqrt((2 * 0.01 + 0.01125) / 3)
    assert cohens_d([0.5, 0.3, 0.4], [0.35, 0.2]) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("pos", "neg"),
    [
        ([1.0], [2.0]),  # fewer than 3 scores
        ([], [1.0, 2.0, 3.0]),
        ([1.0, 2.0, 3.0], []),
        ([0.5, 0.5], [0.5, 0.5]),  # no spread at all
        ([0.5, 0.5], [0.25, 0.25, 0.25]),  # no spread within either side
        ([0.75], [0.25, 0.25]),
    ],
)
def test_cohens_d_is_nan_when_undefined(pos, neg):
    assert math.isnan(cohens_d(pos, neg))


@given(
    a=st.integers(-8, 8).map(lambda i: i / 8),
    b=st.integers(-8, 8).map(lambda i: i / 8),
    n1=st.integers(1, 20),
    n2=st.integers(1, 20),
)
def test_cohens_d_is_nan_for_constant_sides(a, b, n1, n2):
    # Dyadic values: the float mean of a constant array is exact here.
    assert math.isnan(cohens_d([a] * n1, [b] * n2))


@pytest.mark.parametrize(("pos", "neg"), [([0.1] * 3, [0.2] * 3), ([0.1] * 3, [0.1] * 3)])
def test_cohens_d_is_nan_for_constant_sides_with_inexact_means(pos, neg):
    assert math.isnan(cohens_d(pos, neg))


@given(pos=unit_lists, neg=unit_lists)
def test_cohens_d_sign_follows_mean_difference(pos, neg):
    d = cohens_d(pos, neg)
    assume(not math.isnan(d))
    diff = np.mean(pos) - np.mean(neg)
    assert np.sign(d) == np.sign(diff)


@given(
    pos=unit_lists,
    neg=unit_lists,
    shift=st.floats(-10, 10),
    scale=st.floats(0.01, 100),
)
def test_cohens_d_is_invariant_to_shift_and_positive_scale(pos, neg, shift, scale):
    assume(len(pos) + len(neg) >= 3)
    assume(pooled_sd(pos, neg) > 1e-3)
    d = cohens_d(pos, neg)
    shifted = cohens_d([p + shift for p in pos], [n + shift for n in neg])
    scaled = cohens_d([p * scale for p in pos], [n * scale for n in neg])
    assert shifted == pytest.approx(d, rel=1e-6, abs=1e-6)
    assert scaled == pytest.approx(d, rel=1e-9, abs=1e-9)


# -- comparative_ratio ----------------------------------------------------------------------


@given(
    pairs=st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 0.5]), unit),
            st.one_of(st.sampled_from([0.0, 0.5]), unit),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_comparative_ratio_is_mean_of_wins_with_half_ties(pairs):
    s = [p[0] for p in pairs]
    c = [p[1] for p in pairs]
    expected = sum((a > b) + 0.5 * (a == b) for a, b in pairs) / len(pairs)
    assert comparative_ratio(s, c) == pytest.approx(expected, abs=1e-12)


def test_comparative_ratio_ties_all_greater_all_less():
    assert comparative_ratio([0.3, 0.3, 0.3], [0.3, 0.3, 0.3]) == 0.5
    assert comparative_ratio([0.5, 0.6], [0.1, 0.2]) == 1.0
    assert comparative_ratio([0.1, 0.2], [0.5, 0.6]) == 0.0
    assert comparative_ratio([0.5, 0.3, 0.1, 0.3], [0.4, 0.3, 0.2, 0.9]) == pytest.approx(
        (1 + 0.5 + 0 + 0) / 4
    )


def test_comparative_ratio_of_nothing_is_nan():
    assert math.isnan(comparative_ratio([], []))


# -- normalized_similarity ------------------------------------------------------------------


def test_normalized_similarity_worked_example():
    # EXPERIMENT.md: cos(q, h) = 0.2391, cos(q, n) = 0.3598 -> about 0.664
    got = normalized_similarity(0.2391, 0.3598)
    assert float(got) == pytest.approx(0.2391 / 0.3598)
    assert float(got) == pytest.approx(0.6644, abs=1e-3)


def test_normalized_similarity_is_vectorized_and_nan_where_needle_scores_below_the_floor():
    qh = np.array([0.2, 0.3, 0.4, -0.1, 0.5, 0.1486, 0.3, 0.3])
    qn = np.array([0.4, 0.0, -0.2, 0.5, np.nan, 0.0019, NORMALIZED_FLOOR, 0.0999])
    got = normalized_similarity(qh, qn)
    assert got.shape == (8,)
    assert got[0] == pytest.approx(0.5)
    assert math.isnan(got[1])  # qn == 0
    assert math.isnan(got[2])  # qn < 0
    assert got[3] == pytest.approx(-0.2)
    assert math.isnan(got[4])  # qn NaN
    assert math.isnan(got[5])  # the case: 0.1486 / 0.0019 would be 78.2
    assert got[6] == pytest.approx(3.0)  # the floor itself is defined
    assert math.isnan(got[7])


def test_normalized_floor_is_the_documented_value():
    assert NORMALIZED_FLOOR == 0.1
    assert math.isnan(float(normalized_similarity(0.3, math.nextafter(0.1, 0.0))))
    assert float(normalized_similarity(0.3, 0.1)) == 0.3 / 0.1


def test_normalized_similarity_broadcasts_a_scalar_needle_score():
    got = normalized_similarity([0.1, 0.2, 0.3], 0.5)
    np.testing.assert_allclose(got, [0.2, 0.4, 0.6])


@given(
    pairs=st.lists(
        st.tuples(unit, st.one_of(st.sampled_from([0.0, 0.0019, 0.1]), unit)),
        min_size=1,
        max_size=40,
    )
)
def test_normalized_similarity_matches_elementwise_definition(pairs):
    qh = np.array([p[0] for p in pairs])
    qn = np.array([p[1] for p in pairs])
    got = normalized_similarity(qh, qn)
    for value, h, n in zip(got, qh, qn, strict=True):
        if n < NORMALIZED_FLOOR:
            assert math.isnan(value)
        else:
            assert value == h / n
            assert abs(value) <= 1 / NORMALIZED_FLOOR  # no needle gives an unbounded scale


# -- nanmean --------------------------------------------------------------------------------


@given(values=st.lists(st.one_of(st.just(math.nan), st.floats(-1e6, 1e6)), max_size=40))
def test_nanmean_ignores_nan_without_warnings(values):
    finite = [v for v in values if not math.isnan(v)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = nanmean(values)
    if finite:
        assert got == pytest.approx(sum(finite) / len(finite), rel=1e-9, abs=1e-9)
    else:
        assert math.isnan(got)


@pytest.mark.parametrize("values", [[], [math.nan], [math.nan, math.nan, math.nan]])
def test_nanmean_of_no_finite_value_is_nan_without_warnings(values):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(nanmean(values))
        assert math.isnan(nanmean(np.array(values, dtype=float)))


def test_nanmean_also_ignores_infinities():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nanmean([1.0, math.inf, 3.0, -math.inf, math.nan]) == 2.0


def test_module_exports_are_pure_functions_of_arrays():
    # Sanity: metrics work on plain lists, tuples and arrays alike.
    for convert in (list, tuple, np.asarray):
        assert metrics.auc(convert([0.9]), convert([0.1])) == 1.0
        assert metrics.separation(convert([0.9]), convert([0.1])) == pytest.approx(0.8)


# -- wins -----------------------------------------------------------------------------------


def test_wins_are_one_half_zero_elementwise_and_broadcast():
    np.testing.assert_array_equal(wins([0.3, 0.2, 0.1], [0.2, 0.2, 0.2]), [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(
        wins(np.array([[0.3], [0.1]]), np.array([[0.1, 0.3]])), [[1.0, 0.5], [0.5, 0.0]]
    )
