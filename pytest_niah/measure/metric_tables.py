"""Metric tables from scored cases: per length, and per length split by category, order, position.

:func:`question_scores` is the one place cases and negatives become per-question scores:
the tables, the bootstrap intervals and comparisons all go through it, so a cell gives the
same numbers wherever it appears (see :mod:`pytest_niah.measure.metrics` for definitions).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from pytest_niah.measure import metrics
from pytest_niah.measure.records import CaseResult, MetricRow, NegativeScores

SPLITS: dict[str, Callable[[CaseResult], str]] = {
    "category": lambda c: c.category,
    "order": lambda c: c.order,
    "position": lambda c: f"p{c.position:02d}",
}
NegativeKey = tuple[str, str, str, int]  # (arm, scoring, group, length)


def negatives_by_key(negatives: Iterable[NegativeScores]) -> dict[NegativeKey, NegativeScores]:
    """Each question's negatives by (arm, scoring, group, length)."""
    return {(n.arm, n.scoring, n.group_id, n.length): n for n in negatives}


def counted(cases: Iterable[CaseResult]) -> list[CaseResult]:
    """The cases metrics count: valid data, and each haystack once."""
    return [c for c in cases if c.problem is None and c.duplicate_of is None]


def question_scores(
    cases: Iterable[CaseResult],
    negatives: Mapping[NegativeKey, NegativeScores],
    *,
    negative_ids: Mapping[str, frozenset[str]] | None = None,
) -> list[metrics.QuestionScores]:
    """Per-question scores of one slice's cases (one arm, scoring and length).

    Args:
        cases: The slice's cases; invalid and duplicate ones are left out.
        negatives: Every question's negatives.
        negative_ids: Per group, keep only these negatives (the ones two runs share).
    """
    by_group: dict[str, list[CaseResult]] = defaultdict(list)
    for case in counted(cases):
        by_group[case.group_id].append(case)
    out = []
    for group_id, group in sorted(by_group.items()):
        first = group[0]
        negative = negatives.get((first.arm, first.scoring, group_id, first.length))
        scores = np.asarray(negative.scores if negative else (), dtype=float)
        if negative is not None and negative_ids is not None:
            keep = negative_ids.get(group_id, frozenset())
            scores = scores[[i for i, cid in enumerate(negative.control_ids) if cid in keep]]
        out.append(
            metrics.QuestionScores(
                group_id=group_id,
                positives=np.array([c.cos_qh for c in group]),
                controls=np.array([c.control_score for c in group]),
                unread=np.array([c.unread for c in group], dtype=bool),
                negatives=scores,
                normalized=np.array([c.normalized for c in group]),
            )
        )
    return out


def summarize(
    cases: Sequence[CaseResult], negatives: Sequence[NegativeScores]
) -> tuple[MetricRow, ...]:
    """All metric rows, in the cases' (arm, scoring, length) order, then split and key."""
    negs = negatives_by_key(negatives)
    slices: dict[tuple[str, str, int], list[CaseResult]] = defaultdict(list)
    for case in cases:
        slices[case.arm, case.scoring, case.length].append(case)
    rows: list[MetricRow] = []
    for (arm, scoring, length), group in slices.items():  # insertion order = config order
        rows.append(metric_row(arm, scoring, length, "length", "", group, negs))
        for split, key_of in SPLITS.items():
            parts: dict[str, list[CaseResult]] = defaultdict(list)
            for case in group:
                parts[key_of(case)].append(case)
            rows.extend(
                metric_row(arm, scoring, length, split, key, parts[key], negs)
                for key in sorted(parts)
            )
    return tuple(rows)


def metric_row(
    arm: str,
    scoring: str,
    length: int,
    by: str,
    key: str,
    cases: Iterable[CaseResult],
    negatives: Mapping[NegativeKey, NegativeScores],
) -> MetricRow:
    """Metrics of one slice; invalid and duplicate cases are counted but left out."""
    every = list(cases)
    valid = counted(every)
    questions = question_scores(valid, negatives)
    values = metrics.point_metrics(questions)
    normalized = [c.normalized for c in valid]
    position = metrics.position_effects([c.relative_position for c in valid], normalized)
    return MetricRow(
        arm=arm,
        scoring=scoring,
        length=length,
        by=by,
        key=key,
        n_cases=len(every),
        n_questions=len(questions),
        cos_qh=metrics.nanmean([c.cos_qh for c in valid]),
        cos_qn=metrics.nanmean([c.cos_qn for c in valid]),
        normalized=values["normalized"],
        comparative_ratio=values["comparative_ratio"],
        auc=values["auc"],
        auc_study=values["auc_study"],
        separation=values["separation"],
        effect_size=values["effect_size"],
        pearson_r=position.pearson_r,
        slope=position.slope,
        begin=position.begin,
        middle=position.middle,
        end=position.end,
        found=sum(c.found for c in valid),
        missed=sum(not c.found for c in valid),
        truncated=sum(c.truncated for c in valid),
        unread=sum(c.unread for c in valid),
        norm_excluded=sum(not np.isfinite(c.normalized) for c in valid),
        duplicates=sum(c.duplicate_of is not None for c in every),
        invalid=sum(c.problem is not None for c in every),
    )
