"""MaxSim (``--niah-scoring=maxsim``) against its definition, and its unusable inputs.

Brute force: for each question token, the best cosine over the haystack's token vectors
(over all its pieces together); the score is their mean. Questions of different token
counts share one matrix, so a mix-up of their boundaries shows.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.measure.similarity import Scored


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def brute_force(question: np.ndarray, pieces: list[np.ndarray]) -> float:
    q = unit(question)
    d = unit(np.concatenate(pieces))
    return float(np.mean([max(float(a @ b) for b in d) for a in q]))


@pytest.fixture
def vectors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    sizes = {"q1": 3, "q2": 5, "q3": 1, "h1": 4, "h2": 2, "h3": 6, "h4": 3}
    # Scales differ per row: scoring must normalise each token vector itself.
    return {
        k: rng.normal(size=(n, 8)) * rng.uniform(0.5, 3.0, size=(n, 1)) for k, n in sizes.items()
    }


def scored(multi: dict[str, np.ndarray]) -> Scored:
    keys = list(multi)
    pooled = np.stack(
        [m.mean(axis=0) if np.isfinite(m).all() else np.ones(8) for m in multi.values()]
    )
    return Scored.of(pooled, {k: i for i, k in enumerate(keys)}, multi)


def test_scores_equal_the_brute_force_mean_of_best_cosines(vectors):
    queries = ["q1", "q2", "q3"]
    pieces = [["h1"], ["h2", "h3"], ["h4"], ["h3", "h2"]]
    got = scored(vectors).scores(queries, pieces, MAXSIM)
    want = np.array(
        [[brute_force(vectors[q], [vectors[k] for k in keys]) for keys in pieces] for q in queries]
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.shape == (3, 4)
    assert np.ptp(got) > 0.05  # not a constant: the test can tell a wrong reduction


def test_a_question_token_matching_exactly_scores_one_for_that_token():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    d = np.array([[2.0, 0.0], [0.0, -3.0]])  # first token equal in direction, second opposite
    got = scored({"q": q, "d": d}).scores(["q"], [["d"]], MAXSIM)
    # Token 1 finds cosine 1; token 2's best is 0 (orthogonal to the first doc token).
    assert got[0, 0] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "bad",
    [np.array([[np.nan, 1.0]]), np.array([[0.0, 0.0]]), np.zeros((0, 2)), np.array([1.0, 2.0])],
    ids=["non-finite", "zero", "empty", "one-dimensional"],
)
def test_an_unusable_haystack_scores_nan_and_the_others_do_not(bad):
    q = np.array([[1.0, 0.0], [0.6, 0.8]])
    good = np.array([[0.0, 1.0], [1.0, 1.0]])
    pooled = np.ones((3, 2))  # the one-vector rows maxsim does not read
    s = Scored.of(pooled, {"q": 0, "good": 1, "bad": 2}, {"q": q, "good": good, "bad": bad})
    assert s.multi["bad"] is None
    assert s.multi["good"] is not None
    got = s.scores(["q"], [["good"], ["bad"], ["good", "bad"]], MAXSIM)
    assert np.isfinite(got[0, 0])
    assert np.isnan(got[0, 1]) and np.isnan(got[0, 2])  # one bad piece spoils the haystack


def test_an_unusable_question_scores_nan_on_its_row_only(vectors):
    multi = dict(vectors)
    multi["q2"] = np.zeros((3, 8))
    got = scored(multi).scores(["q1", "q2", "q3"], [["h1"], ["h2"]], MAXSIM)
    assert np.isnan(got[1]).all()
    assert np.isfinite(got[[0, 2]]).all()
    np.testing.assert_allclose(got[2, 0], brute_force(vectors["q3"], [vectors["h1"]]), rtol=1e-5)


def test_no_usable_question_gives_all_nan(vectors):
    multi = {"q": np.full((2, 8), np.inf), "h": vectors["h1"]}
    pooled = np.ones((2, 8))
    got = Scored.of(pooled, {"q": 0, "h": 1}, multi).scores(["q"], [["h"]], MAXSIM)
    assert got.shape == (1, 1) and np.isnan(got).all()


def test_token_vectors_are_kept_as_unit_rows(vectors):
    s = scored(vectors)
    for key, rows in s.multi.items():
        assert rows is not None
        assert rows.shape == vectors[key].shape
        np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-5)


def test_token_vectors_with_an_infinity_are_unusable():
    """An infinite component (norm inf, so > 0) must not slip through as a unit row of 0s/NaN."""
    from pytest_niah.measure.similarity import Scored

    good = np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32)
    infinite = np.array([[np.inf, 0.0], [0.0, 1.0]], dtype=np.float32)
    scored = Scored.of(np.eye(2), {"a": 0, "b": 1}, {"a": good, "b": infinite})
    assert scored.multi["b"] is None
    assert scored.multi["a"] is not None
    assert np.allclose(np.linalg.norm(scored.multi["a"], axis=1), 1.0)
