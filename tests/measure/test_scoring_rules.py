"""The score matrix and the cases read from it (pytest_niah.measure.scoring), against brute force.

Found by mutation testing: the fast tests that owned this module never scored sparse rows,
dense rows of chunk-mean, sums of unit chunks whose norm is below 1, or several haystacks of
different piece counts; nor read the fields of a case (relative position, truncation inside
a chunk, case id at position 0, retrieval row) from a plan whose numbers are known.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from pytest_niah.haystacks.grid import case_id, control_id
from pytest_niah.haystacks.haystack import Haystack
from pytest_niah.haystacks.plan import Plan, PlannedHaystack
from pytest_niah.inputs.needles import NeedleGroup
from pytest_niah.measure.scoring import INVALID, ArmQuestions, Rows, RunScoring, score_slice
from pytest_niah.measure.similarity import Scored

# -- Scored.of ----------------------------------------------------------------------------------


def test_dense_rows_are_scaled_to_unit_length_keeping_their_direction():
    raw = np.array([[3.0, 4.0, 0.0], [0.0, -0.5, 0.0], [1e-3, 1e-3, 1e-3]])
    scored = Scored.of(raw, {})
    assert not scored.bad.any()
    np.testing.assert_allclose(np.linalg.norm(scored.matrix, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(scored.matrix[0], [0.6, 0.8, 0.0], rtol=1e-12)
    np.testing.assert_allclose(scored.matrix[1], [0.0, -1.0, 0.0], rtol=1e-12)


def test_sparse_rows_are_scaled_to_unit_length_and_an_empty_row_stays_usable():
    # TF-IDF rows come unit-length already (the last one): they stay as they are.
    raw = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.25], [0.0, 1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by the empty row's zero norm
        scored = Scored.of(sp.csr_matrix(raw), {})
    # An empty sparse row is a text with no known word: it honestly scores 0, not NaN.
    assert scored.bad.tolist() == [False, False, False, False]
    np.testing.assert_allclose(
        scored.matrix.toarray(),
        [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
        rtol=1e-12,
    )


def test_scored_vectors_are_an_immutable_value():
    scored = Scored.of(np.eye(2), {"a": 0, "b": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        scored.index = {}  # type: ignore[misc]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_unusable_rows_are_flagged_and_carry_no_vector(sparse):
    raw = np.array(
        [[3.0, 4.0, 0.0], [np.nan, 1.0, 0.0], [np.inf, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    )
    scored = Scored.of(sp.csr_matrix(raw) if sparse else raw, {})
    matrix = scored.matrix.toarray() if sparse else scored.matrix
    # A zero dense vector is a failed embedding; a zero sparse row is an empty text.
    assert scored.bad.tolist() == [False, True, True, not sparse, False]
    # Unusable rows hold zeros: no NaN or infinity (nor a made-up vector) stays in the matrix.
    assert np.isfinite(matrix).all()
    assert not matrix[1:4].any()
    np.testing.assert_allclose(matrix[4], np.full(3, 1 / math.sqrt(3)), rtol=1e-12)


# -- Scored.scores against brute force ---------------------------------------------------------

PIECES = [["a"], ["b", "c"], ["d", "e", "f"], ["g", "h"], ["b", "c"], ["i", "j"]]


def vectors() -> dict[str, np.ndarray]:
    """Non-unit vectors; g, h nearly opposite (their unit sum has norm < 1), i, j opposite."""
    rng = np.random.default_rng(3)
    out = {k: rng.normal(size=5) * rng.uniform(0.1, 9.0) for k in "qrabcdef"}
    out["g"] = np.array([1.0, 0.0, 0.0, 0.0, 0.0]) * 4.0
    out["h"] = np.array([-0.8, 0.6, 0.0, 0.0, 0.0]) * 0.3
    out["i"] = np.array([0.0, 0.0, 2.0, 1.0, 0.0])
    out["j"] = -out["i"]  # exactly opposite (a multiple would cancel only up to rounding)
    return out


def brute_force(vecs, queries, pieces, scoring) -> np.ndarray:
    def unit(v):
        return v / np.linalg.norm(v)

    out = np.empty((len(queries), len(pieces)))
    for i, q in enumerate(queries):
        for j, keys in enumerate(pieces):
            chunks = [unit(vecs[k]) for k in keys]
            if scoring == "chunk-max":
                out[i, j] = max(float(unit(vecs[q]) @ c) for c in chunks)
            elif scoring == "chunk-mean":
                total = np.sum(chunks, axis=0)
                norm = np.linalg.norm(total)
                # Chunks that cancel out leave no direction: the haystack scores 0.
                out[i, j] = float(unit(vecs[q]) @ total) / norm if norm > 1e-12 else 0.0
            else:
                (only,) = chunks
                out[i, j] = float(unit(vecs[q]) @ only)
    return out


def scored_from(vecs, sparse) -> Scored:
    keys = sorted(vecs)
    matrix = np.array([vecs[k] for k in keys])
    return Scored.of(
        sp.csr_matrix(matrix) if sparse else matrix, {k: i for i, k in enumerate(keys)}
    )


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("scoring", ["chunk-max", "chunk-mean"])
def test_chunk_scores_match_brute_force(scoring, sparse):
    vecs = vectors()
    got = scored_from(vecs, sparse).scores(["q", "r"], PIECES, scoring)
    np.testing.assert_allclose(got, brute_force(vecs, ["q", "r"], PIECES, scoring), atol=1e-12)
    if scoring == "chunk-mean":
        # The unit sum of g and h has norm 0.63: still divided by it, not dropped.
        total = vecs["g"] / 4.0 + vecs["h"] / 0.3
        assert 0.5 < np.linalg.norm(total) < 0.7
        assert got[0, 3] != 0.0
        assert (got[:, 5] == 0.0).all()  # i and j cancel exactly


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_whole_scores_are_cosines_and_equal_pieces_share_their_score(sparse):
    vecs = vectors()
    pieces = [["a"], ["b"], ["a"], ["g"]]
    got = scored_from(vecs, sparse).scores(["q", "r", "g"], pieces, "whole")
    np.testing.assert_allclose(got, brute_force(vecs, ["q", "r", "g"], pieces, "whole"), atol=1e-12)
    assert (got[:, 0] == got[:, 2]).all()
    assert got[2, 3] == pytest.approx(1.0)


@pytest.mark.parametrize("scoring", ["whole", "chunk-max", "chunk-mean"])
def test_an_unusable_row_makes_its_haystack_or_question_nan_and_nothing_else(scoring):
    vecs = vectors()
    vecs["z"] = np.zeros(5)  # a failed (zero) dense embedding
    vecs["y"] = np.array([np.nan, 1.0, 0.0, 0.0, 0.0])
    scored = scored_from(vecs, sparse=False)
    pieces = (
        [["a"], ["z"], ["y"], ["d"]]
        if scoring == "whole"
        else [["a", "b"], ["c", "z"], ["y"], ["d", "e"]]
    )
    got = scored.scores(["q", "y", "r"], pieces, scoring)
    assert np.isnan(got[1]).all()  # the question itself is unusable
    assert np.isnan(got[[0, 2]][:, [1, 2]]).all()  # a haystack with an unusable piece
    good = [p for j, p in enumerate(pieces) if j in (0, 3)]
    expected = brute_force(vecs, ["q", "r"], good, scoring)
    np.testing.assert_allclose(got[[0, 2]][:, [0, 3]], expected, atol=1e-12)


# -- score_slice: the cases, negatives and retrieval row of a hand-built plan ------------------

GROUP = NeedleGroup(
    id="g1", category="food", question="Which?", keywords=(), answer_cues=(), needles=()
)
NEEDLE = "Ann eats figs."
# Every vector against the question q = e1: cosines 0, 0.447, 0.707, 0.2, 1 (needle alone).
VECTORS = {
    "q": [1.0, 0.0, 0.0, 0.0],
    "c0": [0.0, 1.0, 0.0, 0.0],
    "c1": [1.0, 2.0, 0.0, 0.0],
    "hA": [3.0, 3.0, 0.0, 0.0],
    "hB": [0.2, math.sqrt(0.96), 0.0, 0.0],
    "n": [2.0, 0.0, 0.0, 0.0],
    "x": [0.0, 0.0, 1.0, 0.0],
    "y": [1.0, 0.0, 0.0, 1.0],
}


def scored_plan() -> Scored:
    keys = list(VECTORS)
    return Scored.of(np.array([VECTORS[k] for k in keys]), {k: i for i, k in enumerate(keys)})


def control(length: int, c: int, pieces: dict[str, tuple[str, ...]]) -> PlannedHaystack:
    cid = control_id("g1", length, c)
    return PlannedHaystack(Haystack(cid, "g1", length, "", cid, control=c), pieces)


def needle_haystack(
    order: str,
    position: int,
    pieces: dict[str, tuple[str, ...]],
    *,
    offset: int,
    length: int = 100,
    tokens: int = 10,
    own: int = 0,
    duplicate: int | None = None,
    within: dict[str, int] | None = None,
    kind: str = "literal",
) -> PlannedHaystack:
    hid = case_id("g1", kind, order, length, position)
    haystack = Haystack(
        hid,
        "g1",
        length,
        "",
        control_id("g1", length, own),
        kind=kind,
        order=order,
        position=position,
        name="Ann",
        needle=NEEDLE,
        needle_offset=offset,
        needle_tokens=tokens,
        duplicate_position=duplicate,
    )
    return PlannedHaystack(haystack, pieces, within or {})


def plan_of(haystacks: list[PlannedHaystack], scorings=("whole",)) -> Plan:
    plan = Plan(scorings, None, 50, keep_text=False)
    plan.haystacks = haystacks
    plan.needles = {NEEDLE: "n"}
    return plan


def slice_of(
    plan: Plan, *, scoring="whole", length=100, window=None, orders=None, scored=None
) -> Rows:
    run = RunScoring(
        scored or scored_plan(), plan, [GROUP], orders or ("inverted", "default"), window
    )
    return score_slice(run, ArmQuestions("literal", "literal", {"g1": "q"}), scoring, length)


def whole_plan() -> Plan:
    whole = "whole"
    return plan_of(
        [
            # Listed out of case order: the slice orders cases by configured order, then position.
            needle_haystack("default", 3, {whole: ("hB",)}, offset=45, own=1),
            control(100, 0, {whole: ("c0",)}),
            needle_haystack("inverted", 2, {whole: ("hA",)}, offset=0, duplicate=0),
            needle_haystack("default", 1, {whole: ("c0",)}, offset=90),
            control(100, 1, {whole: ("c1",)}),
            needle_haystack("inverted", 0, {whole: ("hA",)}, offset=0),
            # The other arm's needle (onehop): not a case of this (literal) slice.
            needle_haystack("default", 4, {whole: ("hA",)}, offset=50, kind="onehop"),
        ]
    )


def test_a_slice_returns_its_rows_and_a_run_joins_them_in_order():
    rows = slice_of(whole_plan())
    assert (len(rows.cases), len(rows.negatives), len(rows.retrieval)) == (4, 1, 1)
    run = RunScoring(scored_plan(), whole_plan(), [GROUP], ("default",), None)
    arm = ArmQuestions("literal", "literal", {"g1": "q"})
    for record, field in ((rows, "cases"), (run, "window"), (arm, "kind")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)
    other = slice_of(whole_plan(), window=45)
    joined = Rows.joined([rows, Rows(), other])
    assert joined.cases == rows.cases + other.cases
    assert joined.negatives == rows.negatives + other.negatives
    assert joined.retrieval == rows.retrieval + other.retrieval
    assert Rows.joined([]) == Rows()


def test_cases_come_in_configured_order_then_position_with_their_ids():
    cases = slice_of(whole_plan()).cases
    expected = [("inverted", 0), ("inverted", 2), ("default", 1), ("default", 3)]
    assert [(c.order, c.position) for c in cases] == expected
    assert [c.id for c in cases] == [case_id("g1", "literal", o, 100, p) for o, p in expected]
    assert cases[0].id == "g1-literal-inverted-L100-p00"
    assert [c.duplicate_of for c in cases] == [None, cases[0].id, None, None]


def test_case_scores_found_and_relative_position():
    cases = {c.position: c for c in slice_of(whole_plan()).cases}
    # cos_qh against the case's own control (c0 for all but position 3, whose is c1).
    assert cases[0].cos_qh == pytest.approx(math.sqrt(0.5))
    assert cases[0].control_score == pytest.approx(0.0)
    assert cases[3].cos_qh == pytest.approx(0.2)
    assert cases[3].control_score == pytest.approx(1 / math.sqrt(5))
    # Found: strictly above the own control; a tie (position 1 reads its control) is not.
    assert [cases[p].found for p in (0, 1, 3)] == [True, False, False]
    assert cases[1].unread and not cases[0].unread and not cases[3].unread
    # The needle alone scores 1, so the normalized score is cos_qh itself.
    assert cases[0].cos_qn == pytest.approx(1.0)
    assert cases[0].normalized == pytest.approx(math.sqrt(0.5))
    # Offset over the filler (length - needle tokens = 90): 0 start, 0.5 middle, 1 end.
    assert [cases[p].relative_position for p in (0, 3, 1)] == [0.0, 0.5, 1.0]
    for c in cases.values():
        assert (c.problem, c.length, c.needle_tokens, c.name) == (None, 100, 10, "Ann")
        assert (c.arm, c.scoring, c.category, c.group_id) == ("literal", "whole", "food", "g1")


def test_negatives_and_retrieval_row_rank_each_case_first_among_the_controls():
    collected = slice_of(whole_plan())
    (negatives,) = collected.negatives
    assert negatives.control_ids == (control_id("g1", 100, 0), control_id("g1", 100, 1))
    assert negatives.scores == pytest.approx((0.0, 1 / math.sqrt(5)))
    assert (negatives.arm, negatives.scoring, negatives.group_id) == ("literal", "whole", "g1")
    (row,) = collected.retrieval
    # Ranked (the duplicate left out): p0 0.707 ranks 1st; p1 ties c0, pessimistically 3rd;
    # p3 0.2 is 2nd, below c1 (0.447).
    assert (row.arm, row.scoring, row.length) == ("literal", "whole", 100)
    assert row.acc_at_1 == pytest.approx(1 / 3)
    assert row.mrr == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert row.ndcg_at_10 == pytest.approx((1 + 1 / 2 + 1 / math.log2(3)) / 3)


def test_truncated_when_the_needle_starts_at_or_past_the_window():
    cases = {c.position: c for c in slice_of(whole_plan(), window=45).cases}
    assert [cases[p].truncated for p in (0, 3, 1)] == [False, True, True]
    assert not any(c.truncated for c in slice_of(whole_plan(), window=None).cases)


def test_chunk_truncation_reads_the_offset_inside_the_needles_chunk():
    # The needle sits at token 60, 10 tokens into its chunk: a model reading 45 tokens of
    # each chunk reads it whole-chunk, though not in the whole haystack.
    pieces = {"whole": ("hA",), "chunk-max": ("x", "hA")}
    plan = plan_of(
        [
            control(100, 0, {"whole": ("c0",), "chunk-max": ("x", "c0")}),
            needle_haystack("default", 0, pieces, offset=60, within={"chunk-max": 10}),
        ],
        scorings=("whole", "chunk-max"),
    )
    (chunked,) = slice_of(plan, scoring="chunk-max", window=45).cases
    (whole,) = slice_of(plan, scoring="whole", window=45).cases
    assert (chunked.truncated, whole.truncated) == (False, True)
    assert chunked.id == "g1-literal-default-L100-p00-chunk-max"
    assert chunked.cos_qh == pytest.approx(math.sqrt(0.5))  # the best chunk


def test_a_needle_filling_the_whole_haystack_sits_at_relative_position_zero():
    plan = plan_of(
        [
            control(10, 0, {"whole": ("c0",)}),
            needle_haystack("default", 0, {"whole": ("hA",)}, offset=0, length=10, tokens=10),
        ]
    )
    (case,) = slice_of(plan, length=10).cases
    assert case.relative_position == 0.0


def test_an_unusable_embedding_marks_the_case_invalid():
    plan = plan_of(
        [
            control(100, 0, {"whole": ("c0",)}),
            needle_haystack("default", 0, {"whole": ("hA",)}, offset=0),
        ]
    )
    plan.needles = {NEEDLE: "bad"}
    keys = [*VECTORS, "bad"]
    matrix = np.array([*VECTORS.values(), [0.0, 0.0, 0.0, 0.0]])
    scored = Scored.of(matrix, {k: i for i, k in enumerate(keys)})
    (case,) = slice_of(plan, scored=scored, orders=("default",)).cases
    assert math.isnan(case.cos_qn) and case.problem == INVALID
    assert case.cos_qh == pytest.approx(math.sqrt(0.5))


def test_maxsim_reads_the_question_and_the_needle_as_their_token_vectors():
    # Found (mutation sweep mutA, scoring.py:70 the maxsim question keys' mapping deleted):
    # under maxsim the question is its token vectors (plan.multi), not its pooled vector.
    tokens = {
        "q*": [[1.0, 0.0], [0.0, 1.0]],
        "h*": [[1.0, 0.0], [0.0, 1.0]],
        "c*": [[0.6, 0.8]],
        "n*": [[1.0, 0.0]],
    }
    multi = {k: np.array(v) for k, v in tokens.items()}
    scored = Scored.of(np.eye(2), {"q": 0, "n": 1}, multi=multi)
    plan = plan_of(
        [
            control(100, 0, {"maxsim": ("c*",)}),
            needle_haystack("default", 0, {"maxsim": ("h*",)}, offset=0),
        ],
        scorings=("maxsim",),
    )
    plan.multi = {"q": "q*", "n": "n*"}
    (case,) = slice_of(plan, scored=scored, scoring="maxsim", orders=("default",)).cases
    # Each question token's best cosine, averaged: (1 + 1) / 2, (0.6 + 0.8) / 2, (1 + 0) / 2.
    assert (case.cos_qh, case.control_score, case.cos_qn) == pytest.approx((1.0, 0.7, 0.5))


def test_position_zero_comes_before_position_one_whatever_the_plan_s_order():
    # Found (mutation sweep mutA, scoring.py:109 `position or 0` -> `or 1`): position 0
    # sorts as 0, not tied with position 1 (which the plan may list first).
    whole = "whole"
    plan = plan_of(
        [
            control(100, 0, {whole: ("c0",)}),
            needle_haystack("default", 1, {whole: ("hB",)}, offset=45),
            needle_haystack("default", 0, {whole: ("hA",)}, offset=0),
        ]
    )
    assert [c.position for c in slice_of(plan, orders=("default",)).cases] == [0, 1]
