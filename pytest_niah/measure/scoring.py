"""Scores from vectors: every question against every haystack of a length, and the cases.

For each (arm, scoring, length) one score matrix holds each selected question against the
controls of every group (its negatives) and the arm's needle haystacks. Cases, negatives
and the retrieval view all read that matrix, built by
:mod:`pytest_niah.measure.similarity`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.haystacks.grid import case_id
from pytest_niah.haystacks.plan import Plan, PlannedHaystack
from pytest_niah.inputs.needles import NeedleGroup
from pytest_niah.measure.metrics import normalized_similarity
from pytest_niah.measure.records import CaseResult, NegativeScores, RetrievalRow
from pytest_niah.measure.retrieval import rank_metrics
from pytest_niah.measure.similarity import Scored

INVALID = "non-finite or zero embedding (query, haystack, needle or control)"


@dataclass
class Collected:
    """Cases, negatives and retrieval rows of a run, in grid order."""

    cases: list[CaseResult] = field(default_factory=list)
    negatives: list[NegativeScores] = field(default_factory=list)
    retrieval: list[RetrievalRow] = field(default_factory=list)


def score_slice(
    collected: Collected,
    scored: Scored,
    plan: Plan,
    *,
    arm: str,
    kind: str,
    scoring: str,
    length: int,
    groups: Sequence[NeedleGroup],
    queries: Mapping[str, str],
    orders: Sequence[str],
    window: int | None,
    draws: Sequence[int | None] = (None,),
) -> None:
    """Score one (arm, scoring, length): its cases, negatives and retrieval row.

    Args:
        collected: Where the results go.
        scored: The vectors.
        plan: The haystacks and their pieces.
        arm: The arm.
        kind: The needle kind the arm inserts.
        scoring: The scoring.
        length: The haystack length.
        groups: The selected needle groups (the questions), in set order.
        queries: Group id -> the input key of its question in this arm.
        orders: Needle orders, as configured (case order).
        window: Document tokens the model reads (truncation flags).
        draws: The run's haystack draws, as configured (case order: draw, order, position).
    """
    q_keys = [queries[g.id] for g in groups]
    if scoring == MAXSIM:  # the same questions, read as token vectors
        q_keys = [plan.multi[k] for k in q_keys]
    slice_ = _SliceScores.of(scored, plan, q_keys, length=length, kind=kind, scoring=scoring)
    by_id = {p.haystack.id: p for p in slice_.controls}
    control_ids = tuple(by_id)
    in_case_order = _case_order(draws, orders)
    ranked = []
    for g, group in enumerate(groups):
        negatives = slice_.negatives[g]
        collected.negatives.append(
            NegativeScores(
                arm, scoring, group.id, length, control_ids, tuple(float(s) for s in negatives)
            )
        )
        mine = [p for p in slice_.needles if p.haystack.group_id == group.id]
        for planned in sorted(mine, key=in_case_order):
            positive, control, cos_qn = slice_.case_scores(g, planned)
            unread = plan.unread(planned, scoring, by_id)
            case = _case(arm, scoring, group, planned, positive, control, cos_qn, unread, window)
            collected.cases.append(case)
            if case.duplicate_of is None:
                ranked.append(np.concatenate([[positive], negatives]))
    if ranked:
        # The needle haystack is column 0 of each ranked row, its only relevant one.
        m = rank_metrics(np.array(ranked), np.zeros(len(ranked), dtype=int))
        collected.retrieval.append(
            RetrievalRow(arm, scoring, length, m["acc@1"], m["mrr"], m["ndcg@k"])
        )


def _case_order(
    draws: Sequence[int | None], orders: Sequence[str]
) -> Callable[[PlannedHaystack], tuple[int, int, int]]:
    """The sort key of a group's needle haystacks: draw, order, position, as configured."""

    def key(p: PlannedHaystack) -> tuple[int, int, int]:
        return (
            draws.index(p.haystack.seed),
            orders.index(p.haystack.order or ""),
            p.haystack.position or 0,
        )

    return key


@dataclass(frozen=True)
class _SliceScores:
    """One slice's haystacks and the score of each selected question (row) against them.

    Attributes:
        controls: The controls of every group at the length (the negatives' columns).
        needles: The arm's needle haystacks at the length.
        negatives: question x control scores.
        positives: question x needle haystack scores.
        alone: Per question, cos(question, needle alone) by needle text.
    """

    controls: list[PlannedHaystack]
    needles: list[PlannedHaystack]
    negatives: np.ndarray
    positives: np.ndarray
    alone: list[dict[str, float]]
    column: Mapping[str, int]
    control_column: Mapping[str, int]

    @classmethod
    def of(
        cls,
        scored: Scored,
        plan: Plan,
        q_keys: Sequence[str],
        *,
        length: int,
        kind: str,
        scoring: str,
    ) -> _SliceScores:
        at_length = [p for p in plan.haystacks if p.haystack.length == length]
        controls = [p for p in at_length if p.haystack.is_control]
        needles = [p for p in at_length if not p.haystack.is_control and p.haystack.kind == kind]
        # One matrix for the slice: a case and its control are scored side by side.
        pieces = [p.pieces[scoring] for p in (*controls, *needles)]
        matrix = scored.scores(q_keys, pieces, scoring)
        return cls(
            controls,
            needles,
            matrix[:, : len(controls)],
            matrix[:, len(controls) :],
            _by_needle(scored, q_keys, plan, scoring),
            {p.haystack.id: j for j, p in enumerate(needles)},
            {p.haystack.id: i for i, p in enumerate(controls)},
        )

    def case_scores(self, g: int, planned: PlannedHaystack) -> tuple[float, float, float]:
        """Question ``g``'s (haystack, own control, needle alone) scores of a needle haystack."""
        haystack = planned.haystack
        return (
            float(self.positives[g, self.column[haystack.id]]),
            float(self.negatives[g, self.control_column[haystack.control_id]]),
            float(self.alone[g].get(haystack.needle or "", math.nan)),
        )


def _by_needle(
    scored: Scored, q_keys: Sequence[str], plan: Plan, scoring: str
) -> list[dict[str, float]]:
    """cos(question, needle alone) for every needle text, per question (maxsim's for maxsim)."""
    texts = list(plan.needles)
    if not texts:
        return [{} for _ in q_keys]
    if scoring == MAXSIM:
        needles = [[plan.multi[plan.needles[t]]] for t in texts]
        matrix = scored.scores(q_keys, needles, MAXSIM)
    else:
        matrix = scored.scores(q_keys, [[plan.needles[t]] for t in texts], "whole")
    return [dict(zip(texts, row.tolist(), strict=True)) for row in matrix]


def _case(
    arm: str,
    scoring: str,
    group: NeedleGroup,
    planned: PlannedHaystack,
    cos_qh: float,
    control_score: float,
    cos_qn: float,
    unread: bool,
    window: int | None,
) -> CaseResult:
    h = planned.haystack
    assert h.needle_offset is not None and h.needle_tokens is not None
    filler = h.length - h.needle_tokens
    within = (
        h.needle_offset
        if scoring == "whole"
        else planned.within_chunk.get(scoring, h.needle_offset)
    )
    finite = all(math.isfinite(v) for v in (cos_qh, control_score, cos_qn))
    duplicate = None
    if h.duplicate_position is not None:
        duplicate = case_id(
            group.id, arm, h.order or "", h.length, h.duplicate_position, scoring, h.seed
        )
    return CaseResult(
        id=case_id(group.id, arm, h.order or "", h.length, h.position or 0, scoring, h.seed),
        group_id=group.id,
        category=group.category,
        arm=arm,
        scoring=scoring,
        order=h.order or "",
        length=h.length,
        position=h.position or 0,
        relative_position=h.needle_offset / filler if filler else 0.0,
        name=h.name or "",
        needle_offset=h.needle_offset,
        needle_tokens=h.needle_tokens,
        truncated=window is not None and within >= window,
        cos_qh=cos_qh,
        cos_qn=cos_qn,
        normalized=float(normalized_similarity(cos_qh, cos_qn)),
        control_score=control_score,
        found=bool(cos_qh > control_score),
        control_id=h.control_id,
        unread=unread,
        duplicate_of=duplicate,
        problem=None if finite else INVALID,
        seed=h.seed,
    )
