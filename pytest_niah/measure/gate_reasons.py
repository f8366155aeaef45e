"""Why a gate warned or failed, in one short line, and each gate's outcome as the reports count it.

:func:`pytest_niah.measure.gating.length_gates` gives every gate of a length; its
:meth:`~pytest_niah.measure.gating.LengthGates.outcomes` are :class:`GateOutcome` values,
each with its :func:`gate_reason`: summary.md's headline names the first that failed. A run
that gated nothing is told which gates its own intervals support (:func:`suggest_gates`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.measure.chance import at_chance, shown_low
from pytest_niah.measure.records import IntervalRow
from pytest_niah.measure.verdict_text import metric_digits
from pytest_niah.measure.verdicts import UNPAIRED, Verdict

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


# The gates a run suggests: a threshold of each metric, per length (its option's name).
SUGGESTED = (("auc", "--niah-min-auc"), ("comparative_ratio", "--niah-min-ratio"))


def suggest_gates(intervals: Mapping[str, Sequence[IntervalRow]]) -> str:
    """The gates these results support, or why they support none.

    Per length and metric (AUC and comparative ratio), the lowest lower bound of the 95%
    interval over every model, arm and scoring, rounded down: the threshold these results
    would meet. A length where some interval reaches 0.5 gets none: every threshold it would
    meet passes a model at chance too, so there the sentence says ``at chance: no useful gate``
    and names what is at chance.
    """
    several = len(intervals) > 1
    lows: dict[tuple[str, int], float] = {}
    chance_at: dict[int, set[str]] = defaultdict(set)
    for label, rows in intervals.items():
        for row in rows:
            if row.metric not in dict(SUGGESTED) or not math.isfinite(row.low):
                continue
            low = shown_low(row.low)
            lows[row.metric, row.length] = min(lows.get((row.metric, row.length), low), low)
            if at_chance(row.low):
                where = row.arm if row.scoring == "whole" else f"{row.arm}/{row.scoring}"
                chance_at[row.length].add(f"{label}: {where}" if several else where)
    if not lows:
        return (
            "Fix: gate it with --niah-min-auc=T --niah-min-ratio=R (and --niah-bootstrap > 0 "
            "for intervals that suggest them)"
        )
    lengths = sorted({n for _, n in lows})
    useful = [n for n in lengths if n not in chance_at]
    flags = [
        f"{flag}={','.join(f'{n}={lows[metric, n]:.2f}' for n in useful if (metric, n) in lows)}"
        for metric, flag in SUGGESTED
        if any((metric, n) in lows for n in useful)
    ]
    parts = []
    if flags:
        parts.append(
            f"Its own 95% intervals support {' '.join(flags)} (per length, the lowest lower "
            "bound over models, arms and scorings)."
        )
    if chance_at:
        chance = ", ".join(
            f"{n} ({', '.join(sorted(chance_at[n]))})" for n in lengths if n in chance_at
        )
        parts.append(
            f"At chance: no useful gate at {chance}: an AUC or comparative ratio interval "
            "reaches 0.5, so any threshold these results meet there passes a random model too."
        )
    return " ".join(parts)
