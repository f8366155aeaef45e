"""Metric tables from scored cases: per length, and per length split by category, order, position.

Definitions (documented in the README):

- positives of question q at length L: q's needle haystacks of length L (both orders,
  every position) in the arm at hand;
- negatives of q at L: q's scores against every no-needle control of length L (the
  controls of all groups: none holds q's answer);
- AUC, separation and effect size are computed per question, then averaged over
  questions (cosines are comparable only for one query);
- comparative ratio: share of needle haystacks that outscore their own control;
- position effects: Pearson r and slope of normalized similarity on relative position.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from pytest_niah.measure import metrics
from pytest_niah.measure.records import CaseResult, MetricRow, NegativeScores

SPLITS: dict[str, Callable[[CaseResult], str]] = {
    "category": lambda c: c.category,
    "order": lambda c: c.order,
    "position": lambda c: f"p{c.position:02d}",
}


def summarize(
    cases: Sequence[CaseResult], negatives: Sequence[NegativeScores]
) -> tuple[MetricRow, ...]:
    """All metric rows, in the cases' (arm, scoring, length) order, then split and key."""
    negs = {
        (n.arm, n.scoring, n.group_id, n.length): np.asarray(n.scores, dtype=float)
        for n in negatives
    }
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
    negatives: dict[tuple[str, str, str, int], np.ndarray],
) -> MetricRow:
    """Metrics of one slice; cases with a ``problem`` are counted as invalid and left out."""
    all_cases = list(cases)
    valid = [c for c in all_cases if c.problem is None]
    per_question: dict[str, list[CaseResult]] = defaultdict(list)
    for case in valid:
        per_question[case.group_id].append(case)
    aucs, seps, effects = [], [], []
    for group_id, qcases in sorted(per_question.items()):
        pos = np.array([c.cos_qh for c in qcases])
        neg = negatives.get((arm, scoring, group_id, length), np.empty(0))
        neg = neg[np.isfinite(neg)]
        aucs.append(metrics.auc(pos, neg))
        seps.append(metrics.separation(pos, neg))
        effects.append(metrics.cohens_d(pos, neg))
    normalized = [c.normalized for c in valid]
    position = metrics.position_effects([c.relative_position for c in valid], normalized)
    return MetricRow(
        arm=arm,
        scoring=scoring,
        length=length,
        by=by,
        key=key,
        n_cases=len(all_cases),
        n_questions=len(per_question),
        cos_qh=metrics.nanmean([c.cos_qh for c in valid]),
        cos_qn=metrics.nanmean([c.cos_qn for c in valid]),
        normalized=metrics.nanmean(normalized),
        comparative_ratio=metrics.comparative_ratio(
            [c.cos_qh for c in valid], [c.control_score for c in valid]
        ),
        auc=metrics.nanmean(aucs),
        separation=metrics.nanmean(seps),
        effect_size=metrics.nanmean(effects),
        pearson_r=position.pearson_r,
        slope=position.slope,
        begin=position.begin,
        middle=position.middle,
        end=position.end,
        found=sum(c.found for c in valid),
        missed=sum(not c.found for c in valid),
        truncated=sum(c.truncated for c in valid),
        invalid=len(all_cases) - len(valid),
    )
