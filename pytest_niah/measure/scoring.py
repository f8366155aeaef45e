"""Scores from vectors: every question against every haystack of a length, and the cases.

For each (arm, scoring, length) one score matrix holds each selected question against the
controls of every group (its negatives) and the arm's needle haystacks
(:class:`~pytest_niah.measure.slice_scores.SliceScores`). Cases, negatives and the retrieval
view all read that matrix, built by :mod:`pytest_niah.measure.similarity`.
:func:`score_slice` returns a slice's rows; a run's rows are its slices' joined, in grid order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.haystacks.grid import case_id
from pytest_niah.haystacks.plan import Plan, PlannedHaystack
from pytest_niah.inputs.needles import NeedleGroup
from pytest_niah.measure.metrics import normalized_similarity
from pytest_niah.measure.records import CaseResult, NegativeScores, RetrievalRow
from pytest_niah.measure.retrieval import rank_metrics
from pytest_niah.measure.similarity import Scored
from pytest_niah.measure.slice_scores import SliceScores

INVALID = "non-finite or zero embedding (query, haystack, needle or control)"


@dataclass(frozen=True)
class Rows:
    """Cases, negatives and retrieval rows, in grid order: a slice's, or a run's joined."""

    cases: tuple[CaseResult, ...] = ()
    negatives: tuple[NegativeScores, ...] = ()
    retrieval: tuple[RetrievalRow, ...] = ()

    @classmethod
    def joined(cls, parts: Iterable[Rows]) -> Rows:
        """The rows of ``parts``, one after the other."""
        parts = list(parts)
        return cls(
            tuple(c for p in parts for c in p.cases),
            tuple(n for p in parts for n in p.negatives),
            tuple(r for p in parts for r in p.retrieval),
        )


@dataclass(frozen=True)
class RunScoring:
    """What every slice of a run reads: the vectors, the plan, the questions, the case order.

    Attributes:
        scored: The vectors.
        plan: The haystacks and their pieces.
        groups: The selected needle groups (the questions), in set order.
        orders: Needle orders, as configured (case order).
        window: Document tokens the model reads (truncation flags).
        draws: The run's haystack draws, as configured (case order: draw, order, position).
    """

    scored: Scored
    plan: Plan
    groups: Sequence[NeedleGroup]
    orders: Sequence[str]
    window: int | None
    draws: Sequence[int | None] = (None,)


@dataclass(frozen=True)
class ArmQuestions:
    """An arm, the needle kind it inserts, and the input key of each group's question in it.

    Attributes:
        arm: The arm.
        kind: The needle kind the arm inserts.
        queries: Group id -> the input key of its question in this arm.
    """

    arm: str
    kind: str
    queries: Mapping[str, str]


def score_slice(run: RunScoring, questions: ArmQuestions, scoring: str, length: int) -> Rows:
    """One (arm, scoring, length)'s rows: its cases, negatives and retrieval row."""
    arm, plan, groups = questions.arm, run.plan, run.groups
    q_keys = [questions.queries[g.id] for g in groups]
    if scoring == MAXSIM:  # the same questions, read as token vectors
        q_keys = [plan.multi[k] for k in q_keys]
    slice_ = SliceScores.of(
        run.scored, plan, q_keys, length=length, kind=questions.kind, scoring=scoring
    )
    by_id = {p.haystack.id: p for p in slice_.controls}
    control_ids = tuple(by_id)
    in_case_order = _case_order(run.draws, run.orders)
    cases: list[CaseResult] = []
    negatives_rows: list[NegativeScores] = []
    ranked = []
    for g, group in enumerate(groups):
        negatives = slice_.negatives[g]
        negatives_rows.append(
            NegativeScores(
                arm, scoring, group.id, length, control_ids, tuple(float(s) for s in negatives)
            )
        )
        mine = [p for p in slice_.needles if p.haystack.group_id == group.id]
        for planned in sorted(mine, key=in_case_order):
            positive, control, cos_qn = slice_.case_scores(g, planned)
            unread = plan.unread(planned, scoring, by_id)
            case = _case(
                arm, scoring, group, planned, positive, control, cos_qn, unread, run.window
            )
            cases.append(case)
            if case.duplicate_of is None:
                ranked.append(np.concatenate([[positive], negatives]))
    retrieval: tuple[RetrievalRow, ...] = ()
    if ranked:
        # The needle haystack is column 0 of each ranked row, its only relevant one.
        m = rank_metrics(np.array(ranked), np.zeros(len(ranked), dtype=int))
        retrieval = (RetrievalRow(arm, scoring, length, m["acc@1"], m["mrr"], m["ndcg@k"]),)
    return Rows(tuple(cases), tuple(negatives_rows), retrieval)


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
