"""Per-question scores (pytest_niah.measure.metrics): the unread rule, point, weighted metrics."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.measure import metrics
from pytest_niah.measure.metrics import (
    METRICS,
    QuestionScores,
    auc,
    cohens_d,
    point_metrics,
    separation,
    weighted_metrics,
    wins,
)
from pytest_niah.measure.stats import resample_counts

# Cosine-like scores for metrics whose arithmetic (means, variances) can overflow.
unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


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
