"""The study's metrics (pytest_niah.measure.metrics) against independent reference computations."""

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
    METRICS,
    NORMALIZED_FLOOR,
    POSITION_BINS,
    QuestionScores,
    auc,
    cohens_d,
    comparative_ratio,
    nanmean,
    normalized_similarity,
    point_metrics,
    position_bin,
    position_effects,
    separation,
    weighted_metrics,
    wins,
)
from pytest_niah.measure.stats import resample_counts

# Any float but NaN/inf, mixed with a few fixed values so that ties are common.
any_float = st.floats(allow_nan=False, allow_infinity=False)
tie_prone = st.one_of(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0]), any_float)
score_lists = st.lists(tie_prone, min_size=1, max_size=40)
# Cosine-like scores for metrics whose arithmetic (means, variances) can overflow.
unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
unit_lists = st.lists(unit, min_size=1, max_size=40)
# Relative needle positions: a grid of 0..1 plus the exact bin boundaries.
relative = st.one_of(st.sampled_from([1 / 3, 2 / 3]), st.integers(0, 1000).map(lambda i: i / 1000))


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


# -- position effects -----------------------------------------------------------------------


def test_position_bin_boundaries():
    assert position_bin(0.0) == "begin"
    assert position_bin(math.nextafter(1 / 3, 0)) == "begin"
    assert position_bin(1 / 3) == "middle"
    assert position_bin(0.5) == "middle"
    assert position_bin(2 / 3) == "middle"
    assert position_bin(math.nextafter(2 / 3, 1)) == "end"
    assert position_bin(1.0) == "end"
    assert POSITION_BINS == ("begin", "middle", "end")


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 60))
def test_position_effects_agree_with_numpy_on_random_data(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = 0.3 - 0.2 * x + rng.normal(0, 0.05, n)
    eff = position_effects(x, y)
    assert eff.pearson_r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-9)
    assert eff.slope == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-7, abs=1e-9)


@given(
    points=st.lists(
        st.tuples(relative, st.floats(-1, 1)),
        min_size=2,
        max_size=40,
    )
)
def test_position_effects_bins_and_fit_on_hypothesis_data(points):
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    eff = position_effects(x, y)
    for name, mask in (
        ("begin", x < 1 / 3),
        ("middle", (x >= 1 / 3) & (x <= 2 / 3)),
        ("end", x > 2 / 3),
    ):
        got = getattr(eff, name)
        if mask.any():
            assert got == pytest.approx(y[mask].mean(), abs=1e-12)
        else:
            assert math.isnan(got)
    if np.std(x) > 1e-3 and np.std(y) > 1e-3:
        assert eff.pearson_r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-7)
        assert eff.slope == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-6, abs=1e-7)


def test_position_effects_bins_are_means_of_thirds():
    x = [0.0, 0.1, 0.4, 0.5, 0.6, 0.9, 1.0]
    y = [1.0, 3.0, 10.0, 20.0, 30.0, 5.0, 7.0]
    eff = position_effects(x, y)
    assert eff.begin == pytest.approx(2.0)
    assert eff.middle == pytest.approx(20.0)
    assert eff.end == pytest.approx(6.0)


def test_position_effects_constant_score_has_zero_slope_and_nan_r():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eff = position_effects([0.0, 0.25, 0.5, 1.0], [0.4, 0.4, 0.4, 0.4])
    assert eff.slope == 0.0
    assert math.isnan(eff.pearson_r)
    assert eff.begin == eff.middle == eff.end == 0.4


def test_position_effects_constant_position_has_no_fit():
    eff = position_effects([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])
    assert math.isnan(eff.slope)
    assert math.isnan(eff.pearson_r)
    assert eff.middle == pytest.approx(0.2)
    assert math.isnan(eff.begin)
    assert math.isnan(eff.end)


def test_position_effects_drop_nonfinite_pairs():
    x = [0.0, 0.5, 1.0, np.nan, 0.2]
    y = [0.3, 0.2, 0.1, 0.9, np.inf]
    eff = position_effects(x, y)
    assert eff.slope == pytest.approx(-0.2)
    assert eff.pearson_r == pytest.approx(-1.0)
    assert eff.begin == pytest.approx(0.3)


def test_position_effects_of_nothing_is_all_nan():
    eff = position_effects([], [])
    assert all(math.isnan(v) for v in (eff.pearson_r, eff.slope, eff.begin, eff.middle, eff.end))


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


# -- QuestionScores -------------------------------------------------------------------------


def question(group_id, positives, negatives, controls=None, normalized=None, unread=None):
    """A question; controls default to 0 (every case found), normalized to the positives."""
    positives = np.asarray(positives, dtype=float)
    return QuestionScores(
        group_id=group_id,
        positives=positives,
        controls=np.zeros_like(positives) if controls is None else np.asarray(controls),
        unread=np.zeros(positives.size, bool) if unread is None else np.asarray(unread, bool),
        negatives=np.asarray(negatives, dtype=float),
        normalized=positives if normalized is None else np.asarray(normalized, dtype=float),
    )


def test_question_scores_coerces_to_flat_float_and_bool_arrays():
    q = question("a", [[1, 2]], [0], unread=[0, 1])
    assert q.positives.dtype == float and q.negatives.dtype == float
    assert q.positives.shape == (2,)
    assert q.unread.dtype == bool and q.unread.tolist() == [False, True]


def test_question_scores_rejects_mismatched_case_arrays():
    with pytest.raises(ValueError, match="one value per case"):
        question("a", [0.1, 0.2], [0.0], controls=[0.0])
    with pytest.raises(ValueError, match="one value per case"):
        question("a", [0.1, 0.2], [0.0], normalized=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="one value per case"):
        question("a", [0.1, 0.2], [0.0], unread=[False])


def test_per_question_metrics_of_a_read_question_are_the_two_sample_metrics():
    pos, neg = [0.5, 0.3, 0.4], [0.35, 0.2]
    got = question("a", pos, neg).per_question()
    assert got["auc"] == got["auc_study"] == pytest.approx(auc(pos, neg)) == pytest.approx(5 / 6)
    assert got["separation"] == pytest.approx(separation(pos, neg))
    assert got["effect_size"] == pytest.approx(cohens_d(pos, neg))


def test_per_question_metrics_without_negatives_are_undefined():
    for negatives in ([], [math.nan, math.nan]):
        got = question("a", [0.5], negatives).per_question()
        assert all(math.isnan(v) for v in got.values()), got


# -- the unread rule (found: past-window cells decided by chance) -----------------------------
# A case whose needle lies past the model's window embeds exactly like its control: whatever
# rank that shared score happens to take among the question's negatives is chance, so the
# gated AUC and the ratio count it one half and the separation 0. AUC (study) still ranks it.


@given(
    negatives=st.lists(unit, min_size=1, max_size=12),
    tied=st.one_of(unit, st.sampled_from([-1.0, 1.0])),
    read=st.lists(unit, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_an_unread_positive_counts_one_half_in_auc_whatever_its_rank(negatives, tied, read, seed):
    # The unread case scores `tied`, exactly its own control's score; place that score
    # among the negatives at any rank (it may equal one, sit above all, or below all).
    shuffled = np.random.default_rng(seed).permutation(negatives)
    positives = [*read, tied]
    unread = [False] * len(read) + [True]
    q = question("a", positives, shuffled, controls=[*read, tied], unread=unread)
    got = q.per_question()
    read_rates = [auc([p], negatives) for p in read]
    assert got["auc"] == pytest.approx((sum(read_rates) + 0.5) / (len(read) + 1), abs=1e-12)
    if not read:
        assert got["auc"] == 0.5  # exactly, not approximately
    # AUC (study) ranks the unread case where its score happens to fall.
    study_rates = [*read_rates, auc([tied], negatives)]
    assert got["auc_study"] == pytest.approx(sum(study_rates) / len(study_rates), abs=1e-12)
    # Its separation is 0, whatever its score.
    differences = [p - np.mean(negatives) for p in read] + [0.0]
    assert got["separation"] == pytest.approx(np.mean(differences), abs=1e-12)
    # And against its own control it ties.
    assert q.ratio_wins() == pytest.approx(sum(wins(read, read)) + 0.5)


def test_unread_rule_against_the_study_auc_on_a_lucky_and_an_unlucky_rank():
    negatives = [0.2, 0.3, 0.4]
    lucky = question("a", [0.9], negatives, controls=[0.9], unread=[True]).per_question()
    unlucky = question("a", [0.1], negatives, controls=[0.1], unread=[True]).per_question()
    assert lucky["auc"] == unlucky["auc"] == 0.5
    assert (lucky["auc_study"], unlucky["auc_study"]) == (1.0, 0.0)
    assert lucky["separation"] == unlucky["separation"] == 0.0
    assert math.isnan(lucky["effect_size"])  # no read positive to standardize


def test_unread_positives_leave_the_effect_size_to_the_read_ones():
    pos, neg = [0.5, 0.3, 0.4], [0.35, 0.2]
    q = question("a", [*pos, 0.99], neg, controls=[0.0, 0.0, 0.0, 0.99], unread=[0, 0, 0, 1])
    got = q.per_question()
    separation_all = (sum(p - np.mean(neg) for p in pos) + 0.0) / 4
    assert got["separation"] == pytest.approx(separation_all)
    assert got["effect_size"] == pytest.approx(separation_all / metrics.pooled_sd(pos, neg))


def test_an_unread_case_ties_its_control_in_the_comparative_ratio_even_off_by_rounding():
    q = question("a", [0.6, 0.7], [0.1], controls=[0.5 + 1e-9, 0.1], unread=[True, False])
    assert q.ratio_wins() == 1.5
    assert point_metrics([q], ["comparative_ratio"])["comparative_ratio"] == 0.75


# -- point_metrics ----------------------------------------------------------------------------


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
    assert got["auc_study"] == got["auc"]  # nothing unread
    sep_a = 0.5 - 0.4
    sep_b = 0.2 - 0.15
    assert got["separation"] == pytest.approx((sep_a + sep_b) / 2)
    # Pooled SD (ddof=1): a: var(pos)=0.02, var(neg)=0.02 -> 0.1414; b: var(pos)=0.01,
    # var(neg)=0.02 -> sqrt((2*0.01 + 1*0.02)/3).
    d_a = sep_a / math.sqrt(0.02)
    d_b = sep_b / math.sqrt((2 * 0.01 + 0.02) / 3)
    assert got["effect_size"] == pytest.approx((d_a + d_b) / 2)
    assert got["comparative_ratio"] == pytest.approx((1 + 0.5 + 1) / 5)
    # Normalized similarity pools the cases (NaN left out), it is not a mean of questions.
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


def test_questions_are_weighted_equally_whatever_their_number_of_cases():
    many = question("many", [0.9] * 50, [0.1])  # AUC 1
    few = question("few", [0.0], [0.1])  # AUC 0
    assert point_metrics([many, few], ["auc"])["auc"] == 0.5


# -- weighted_metrics / resample_counts -----------------------------------------------------

nan_prone = st.sampled_from([0.0, 0.1, 0.2, 0.5, math.nan])
finite = st.sampled_from([0.0, 0.1, 0.2, 0.5])


@st.composite
def questions_strategy(draw):
    out = []
    for i in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 4))
        positives = draw(st.lists(finite, min_size=n, max_size=n))
        unread = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        drawn = draw(st.lists(finite, min_size=n, max_size=n))
        # An unread case scores exactly as its control.
        controls = [p if u else c for p, u, c in zip(positives, unread, drawn, strict=True)]
        out.append(
            question(
                f"g{i}",
                positives=positives,
                controls=controls,
                unread=unread,
                negatives=draw(st.lists(nan_prone, min_size=0, max_size=4)),
                normalized=draw(st.lists(nan_prone, min_size=n, max_size=n)),
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


def test_weighted_metrics_reject_counts_of_the_wrong_shape_and_unknown_names():
    with pytest.raises(ValueError, match="shape"):
        weighted_metrics(hand_built(), np.ones((3, 5)))
    with pytest.raises(ValueError, match="unknown metrics"):
        weighted_metrics(hand_built(), np.ones((1, 2)), ["recall"])


@pytest.mark.parametrize(("positives", "negatives"), [([], [0.1, 0.2]), ([0.3], []), ([], [])])
def test_auc_with_an_empty_side_is_nan_without_a_numpy_warning(positives, negatives):
    # An empty side is answered before numpy averages nothing (and warns on the user's run).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(metrics.auc(positives, negatives))
