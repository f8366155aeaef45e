"""Why a gate warned or failed, in one short line, and each gate's outcome as the reports count it.

:func:`pytest_niah.measure.gating.length_gates` gives every gate of a length; its
:meth:`~pytest_niah.measure.gating.LengthGates.outcomes` are :class:`GateOutcome` values,
each with its :func:`gate_reason`: summary.md's headline names the first that failed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.measure.verdicts import UNPAIRED, Verdict, metric_digits

Slice = tuple[str, str, int]  # (arm, scoring, length)


@dataclass(frozen=True)
class GateOutcome:
    """One gate's outcome at one length of one model (what summary.md's headline counts).

    Attributes:
        label: The model's label.
        arm: The arm.
        scoring: The scoring.
        length: The haystack length in tokens.
        metric: The gated metric (``auc``, ``comparative_ratio``, ...).
        outcome: ``pass``, ``warn`` or ``fail``.
        reason: Why it warned or failed, one short line (:func:`gate_reason`); "" for a pass.
    """

    label: str
    arm: str
    scoring: str
    length: int
    metric: str
    outcome: str
    reason: str = ""

    @classmethod
    def of(cls, label: str, where: Slice, verdict: Verdict, outcome: str) -> GateOutcome:
        """The outcome of ``verdict`` at ``where`` (arm, scoring, length), with its reason."""
        arm, scoring, length = where
        reason = gate_reason(verdict, outcome)
        return cls(label, arm, scoring, length, verdict.metric, outcome, reason)


def gate_reason(verdict: Verdict, outcome: str) -> str:
    """Why a gate warned or failed, in one short line; "" for a pass.

    Threshold missed, drop past the allowance, inconclusive (its interval crosses the
    limit), nothing paired with the baseline, or a metric undefined in this run.
    """
    if outcome == "pass":
        return ""
    name = METRIC_LABELS.get(verdict.metric, verdict.metric)
    digits = metric_digits(verdict.metric)
    if verdict.state == UNPAIRED:
        return f"{name}: no cell paired with the baseline"
    if math.isnan(verdict.point):
        return f"{name} undefined in this run"
    comparison = verdict.kind == "comparison"
    point = (
        f"{name} changed {verdict.point:+.{digits}f}"
        if comparison
        else f"{name} {verdict.point:.{digits}f}"
    )
    limit = (
        f"allowed drop {verdict.limit:.{digits}f}" if comparison else f"threshold {verdict.limit:g}"
    )
    if verdict.state in ("regressed", "below threshold"):
        missed = "fell past the" if comparison else "below the"
        return f"{point}, {missed} {limit}"
    if verdict.state == "inconclusive":
        past = "; the point is past it" if verdict.past_limit and outcome == "fail" else ""
        return f"{point}: inconclusive, its 95% interval crosses the {limit}{past}"
    return f"{point}: {verdict.state} ({limit})"
