"""Retrieval view: ranks, acc@1, MRR and nDCG (pytest_niah.measure.retrieval)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import label_ranking_average_precision_score, ndcg_score

from pytest_niah.measure.retrieval import RANK_METRICS, metrics_from_ranks, rank_metrics, ranks


def one_hot(relevant, n_docs):
    out = np.zeros((len(relevant), n_docs))
    out[np.arange(len(relevant)), relevant] = 1
    return out


@st.composite
def retrieval_problem(draw, *, ties=False):
    n_queries = draw(st.integers(1, 8))
    n_docs = draw(st.integers(2, 25))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scores = rng.normal(size=(n_queries, n_docs))
    if ties:
        scores = np.round(scores)  # a handful of distinct values: ties everywhere
    relevant = rng.integers(0, n_docs, n_queries)
    return scores, relevant


def test_perfect_scorer_gets_one_everywhere():
    relevant = np.array([2, 0, 4, 1])
    got = rank_metrics(one_hot(relevant, 6), relevant)
    assert got == {"acc@1": 1.0, "mrr": 1.0, "ndcg@k": 1.0}
    assert tuple(got) == RANK_METRICS


def test_constant_scorer_ranks_the_relevant_doc_last():
    relevant = np.array([0, 3, 5])
    got = rank_metrics(np.full((3, 6), 0.42), relevant)
    assert got["acc@1"] == 0.0
    assert got["mrr"] == pytest.approx(1 / 6)
    assert got["ndcg@k"] == pytest.approx(1 / math.log2(7))
    assert rank_metrics(np.full((3, 12), 0.42), relevant)["ndcg@k"] == 0.0  # rank 12 > k


def test_small_example_by_hand():
    scores = np.array(
        [
            [0.9, 0.5, 0.7],  # relevant 2 ranks 2nd
            [0.1, 0.3, 0.2],  # relevant 0 ranks 3rd
            [0.5, 0.5, 0.1],  # relevant 0 ties doc 1: ranks 2nd
            [0.2, 0.8, 0.4],  # relevant 1 ranks 1st
        ]
    )
    relevant = np.array([2, 0, 0, 1])
    np.testing.assert_array_equal(ranks(scores, relevant), [2, 3, 2, 1])
    got = rank_metrics(scores, relevant)
    assert got["acc@1"] == 0.25
    assert got["mrr"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 2 + 1) / 4)
    assert got["ndcg@k"] == pytest.approx((1 / math.log2(3) + 1 / 2 + 1 / math.log2(3) + 1) / 4)
    # With k=2 the row ranked 3rd scores 0.
    assert rank_metrics(scores, relevant, k=2)["ndcg@k"] == pytest.approx(
        (1 / math.log2(3) + 0 + 1 / math.log2(3) + 1) / 4
    )


def test_exclude_mask_removes_docs_from_the_ranking():
    scores = np.array([[0.9, 0.8, 0.7, 0.1], [0.9, 0.8, 0.7, 0.1]])
    relevant = np.array([2, 2])
    exclude = np.array([[True, False, False, False], [True, True, False, False]])
    np.testing.assert_array_equal(ranks(scores, relevant), [3, 3])
    np.testing.assert_array_equal(ranks(scores, relevant, exclude), [2, 1])


def test_nan_scores_rank_last():
    scores = np.array([[math.nan, 0.2, math.nan], [0.1, math.nan, 0.3]])
    np.testing.assert_array_equal(ranks(scores, np.array([0, 0])), [3, 2])


@given(problem=retrieval_problem(), k=st.sampled_from([1, 3, 10]))
def test_matches_sklearn_on_tie_free_data(problem, k):
    scores, relevant = problem
    assume(all(np.unique(row).size == row.size for row in scores))
    n_docs = scores.shape[1]
    got = rank_metrics(scores, relevant, k=k)
    assert got["ndcg@k"] == pytest.approx(ndcg_score(one_hot(relevant, n_docs), scores, k=k))
    assert got["acc@1"] == pytest.approx(np.mean(np.argmax(scores, axis=1) == relevant))


@given(problem=retrieval_problem(ties=True))
def test_mrr_matches_sklearn_lrap_even_with_ties(problem):
    # With one relevant label, LRAP is 1/rank and sklearn also ranks ties pessimistically.
    scores, relevant = problem
    expected = label_ranking_average_precision_score(one_hot(relevant, scores.shape[1]), scores)
    assert rank_metrics(scores, relevant)["mrr"] == pytest.approx(expected)


@given(problem=retrieval_problem(ties=True), data=st.data())
def test_excluding_a_doc_equals_deleting_it(problem, data):
    scores, relevant = problem
    n_docs = scores.shape[1]
    exclude = np.array(
        data.draw(
            st.lists(
                st.lists(st.booleans(), min_size=n_docs, max_size=n_docs),
                min_size=len(relevant),
                max_size=len(relevant),
            )
        )
    )
    exclude[np.arange(len(relevant)), relevant] = False
    got = ranks(scores, relevant, exclude)
    for row, (s, rel, ex) in enumerate(zip(scores, relevant, exclude, strict=True)):
        kept = np.flatnonzero(~ex)
        expected = ranks(s[kept][None, :], np.array([np.searchsorted(kept, rel)]))
        assert got[row] == expected[0]


def test_no_rows_give_nan():
    got = rank_metrics(np.empty((0, 4)), np.empty(0, dtype=int))
    assert all(math.isnan(v) for v in got.values())
    assert all(math.isnan(v) for v in metrics_from_ranks(np.empty(0)).values())


def test_bad_input_is_rejected():
    scores = np.zeros((2, 3))
    with pytest.raises(ValueError, match="2-D"):
        rank_metrics(np.zeros(3), np.array([0]))
    with pytest.raises(ValueError, match="integer indices"):
        rank_metrics(scores, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="lie in"):
        rank_metrics(scores, np.array([0, 3]))
    with pytest.raises(ValueError, match="exclude must have shape"):
        rank_metrics(scores, np.array([0, 1]), np.zeros((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="own relevant"):
        rank_metrics(scores, np.array([0, 1]), np.eye(2, 3, dtype=bool))
    with pytest.raises(ValueError, match="k must be"):
        rank_metrics(scores, np.array([0, 1]), k=0)
