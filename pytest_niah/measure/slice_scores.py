"""One slice's score matrix: each question against the length's controls and the arm's needles.

Built once per (arm, scoring, length) by :func:`pytest_niah.measure.scoring.score_slice`
from the vectors :mod:`pytest_niah.measure.similarity` scores; a case and its control are
scored side by side, in one matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.haystacks.plan import Plan, PlannedHaystack
from pytest_niah.measure.similarity import Scored


@dataclass(frozen=True)
class SliceScores:
    """One slice's haystacks and the score of each selected question (row) against them.

    Attributes:
        controls: The controls of every group at the length (the negatives' columns).
        needles: The arm's needle haystacks at the length.
        negatives: question x control scores.
        positives: question x needle haystack scores.
        alone: Per question, cos(question, needle alone) by needle text.
        column: Needle haystack id -> its column of ``positives``.
        control_column: Control id -> its column of ``negatives``.
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
    ) -> SliceScores:
        """The scores of ``q_keys`` against the controls and the ``kind`` needles at ``length``."""
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
