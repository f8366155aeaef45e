"""Scores from vectors: every question against every haystack of a length, and the cases.

For each (arm, scoring, length) one score matrix holds each selected question against the
controls of every group (its negatives) and the arm's needle haystacks. Cases, negatives
and the retrieval view all read that matrix.

``maxsim`` scores token vectors (a multi-vector model's output) by late interaction: each of
the question's token vectors takes its best cosine among the haystack's token vectors, and
the score is their mean (MeanMaxSim: ColBERT's MaxSim divided by the question's tokens, so it
lies in -1..1 like a cosine, whatever the question's length).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.haystacks.grid import case_id
from pytest_niah.haystacks.plan import Plan, PlannedHaystack
from pytest_niah.inputs.needles import NeedleGroup
from pytest_niah.measure.metrics import normalized_similarity
from pytest_niah.measure.records import CaseResult, NegativeScores, RetrievalRow
from pytest_niah.measure.retrieval import rank_metrics

INVALID = "non-finite or zero embedding (query, haystack, needle or control)"


@dataclass(frozen=True)
class Scored:
    """Unit-normalized vectors of every input, and which rows are unusable.

    Attributes:
        matrix: One row per input key (a dense ndarray, or scipy sparse for TF-IDF).
        bad: True where the embedding was non-finite, or a zero dense vector.
        index: Input key -> row.
        multi: Token vectors (``maxsim``): input key -> unit rows, ``None`` where unusable.
    """

    matrix: Any
    bad: np.ndarray
    index: Mapping[str, int]
    multi: Mapping[str, np.ndarray | None] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        matrix: Any,
        index: Mapping[str, int],
        multi: Mapping[str, np.ndarray] | None = None,
    ) -> Scored:
        """Normalize rows; flag the unusable ones (they score NaN)."""
        import scipy.sparse as sp

        if multi:
            scored = cls.of(matrix, index)
            return cls(scored.matrix, scored.bad, index, {k: _unit(v) for k, v in multi.items()})

        if sp.issparse(matrix):
            # Sparse rows are lexical: an empty row (no known word) honestly scores 0.
            to_csr: Any = sp.csr_matrix  # scipy-stubs' overloads reject a matrix typed Any
            csr: Any = to_csr(matrix).astype(np.float64)
            norms = np.sqrt(np.asarray(csr.multiply(csr).sum(axis=1)).ravel())
            bad = ~np.isfinite(norms)
            scale = np.where(bad | (norms == 0), 0.0, 1.0 / np.where(norms == 0, 1.0, norms))
            return cls(sp.diags(scale) @ csr, bad, index)
        dense = np.asarray(matrix, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            norms = np.linalg.norm(dense, axis=1) if dense.size else np.zeros(len(dense))
        bad = ~np.isfinite(norms) | (norms == 0) | ~np.isfinite(dense).all(axis=1)
        safe = np.where(bad, 1.0, norms)
        return cls(np.where(bad[:, None], 0.0, dense / safe[:, None]), bad, index)

    def rows(self, keys: Sequence[str]) -> np.ndarray:
        """Row indices of keys."""
        return np.fromiter((self.index[k] for k in keys), dtype=np.intp, count=len(keys))

    def scores(
        self, queries: Sequence[str], pieces: Sequence[Sequence[str]], scoring: str
    ) -> np.ndarray:
        """cos(question, haystack) for each question and each haystack (given by its pieces).

        Haystacks the model reads alike (the same pieces) are scored once and share the
        result bit for bit, whatever their place in the matrix.
        """
        unique = list(dict.fromkeys(tuple(p) for p in pieces))
        column = {p: i for i, p in enumerate(unique)}
        scores = self._scores(queries, unique, scoring)
        return scores[:, [column[tuple(p)] for p in pieces]]

    def _scores(
        self, queries: Sequence[str], pieces: Sequence[Sequence[str]], scoring: str
    ) -> np.ndarray:
        if scoring == MAXSIM:
            return self._maxsim(queries, pieces)
        flat = [k for keys in pieces for k in keys]
        starts = np.cumsum([0] + [len(keys) for keys in pieces[:-1]])
        q_rows = self.rows(queries)
        d_rows = self.rows(flat)
        q = self.matrix[q_rows]
        d = self.matrix[d_rows]
        if scoring == "chunk-mean":
            summed = _sum_runs(d, starts, len(flat))
            norms = _norms(summed)
            out = _dense(q @ summed.T) / np.where(norms > 0, norms, np.inf)
        else:
            raw = _dense(q @ d.T)
            out = np.maximum.reduceat(raw, starts, axis=1) if scoring == "chunk-max" else raw
        out[:, np.logical_or.reduceat(self.bad[d_rows], starts)] = np.nan
        out[self.bad[q_rows], :] = np.nan
        return out

    def _maxsim(self, queries: Sequence[str], pieces: Sequence[Sequence[str]]) -> np.ndarray:
        """Mean over each question's token vectors of their best cosine in each haystack."""
        out = np.full((len(queries), len(pieces)), np.nan)
        parts = {i: self.multi[k] for i, k in enumerate(queries)}
        usable = {i: p for i, p in parts.items() if p is not None}
        if not usable:
            return out
        rows = list(usable)
        tokens = np.concatenate(list(usable.values()))
        sizes = np.array([len(p) for p in usable.values()])
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        for j, keys in enumerate(pieces):
            docs = [self.multi[k] for k in keys]
            found = [d for d in docs if d is not None]
            if len(found) < len(docs):
                continue  # an unusable haystack scores NaN
            best = (tokens @ np.concatenate(found).T).max(axis=1).astype(float)
            out[rows, j] = np.add.reduceat(best, starts) / sizes
        return out


def _unit(vectors: np.ndarray) -> np.ndarray | None:
    """Token vectors scaled to unit length, or ``None`` when any is non-finite or zero."""
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2 or not len(rows) or not np.isfinite(rows).all():
        return None
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    if not (norms > 0).all():
        return None
    unit: np.ndarray = rows / norms
    return unit


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
    at_length = [p for p in plan.haystacks if p.haystack.length == length]
    controls = [p for p in at_length if p.haystack.is_control]
    needles = [p for p in at_length if not p.haystack.is_control and p.haystack.kind == kind]
    control_index = {p.haystack.id: i for i, p in enumerate(controls)}
    by_id = {p.haystack.id: p for p in controls}
    q_keys = [queries[g.id] for g in groups]
    if scoring == MAXSIM:  # the same questions, read as token vectors
        q_keys = [plan.multi[k] for k in q_keys]
    # One matrix for the slice: a case and its control are scored side by side.
    matrix = scored.scores(q_keys, [p.pieces[scoring] for p in (*controls, *needles)], scoring)
    negatives, needle_matrix = matrix[:, : len(controls)], matrix[:, len(controls) :]
    column = {p.haystack.id: j for j, p in enumerate(needles)}
    needle_scores = _by_needle(scored, q_keys, plan, scoring)
    control_ids = tuple(p.haystack.id for p in controls)
    ranked, relevant = [], []
    for g, group in enumerate(groups):
        mine = [p for p in needles if p.haystack.group_id == group.id]
        mine.sort(
            key=lambda p: (
                draws.index(p.haystack.seed),
                orders.index(p.haystack.order or ""),
                p.haystack.position or 0,
            )
        )
        collected.negatives.append(
            NegativeScores(
                arm, scoring, group.id, length, control_ids, tuple(float(s) for s in negatives[g])
            )
        )
        for planned in mine:
            own = control_index[planned.haystack.control_id]
            positive = float(needle_matrix[g, column[planned.haystack.id]])
            case = _case(
                arm,
                scoring,
                group,
                planned,
                positive,
                float(negatives[g, own]),
                float(needle_scores[g].get(planned.haystack.needle or "", math.nan)),
                plan.unread(planned, scoring, by_id),
                window,
            )
            collected.cases.append(case)
            if case.duplicate_of is None:
                ranked.append(np.concatenate([[positive], negatives[g]]))
                relevant.append(0)
    if ranked:
        m = rank_metrics(np.array(ranked), np.array(relevant))
        collected.retrieval.append(
            RetrievalRow(arm, scoring, length, m["acc@1"], m["mrr"], m["ndcg@k"])
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


def _dense(product: Any) -> np.ndarray:
    return np.asarray(product.toarray() if hasattr(product, "toarray") else product, dtype=float)


def _norms(matrix: Any) -> np.ndarray:
    if hasattr(matrix, "multiply"):
        norms: np.ndarray = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        return norms
    dense: np.ndarray = np.linalg.norm(np.asarray(matrix, dtype=float), axis=1)
    return dense


def _sum_runs(rows: Any, starts: np.ndarray, total: int) -> Any:
    """Sum consecutive runs of rows (one run per haystack) with a sparse 0/1 matrix."""
    import scipy.sparse as sp

    ends = np.append(starts[1:], total)
    owner = np.repeat(np.arange(len(starts)), ends - starts)
    aggregate = sp.csr_matrix(
        (np.ones(total), (owner, np.arange(total))), shape=(len(starts), total)
    )
    return aggregate @ rows
