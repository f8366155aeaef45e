"""The gate of one length, in one place: which gates apply, their verdicts, what they do.

A length is gated by ``--niah-min-auc`` and ``--niah-min-ratio`` where they set a threshold
for it, and by every ``--niah-compare-fail`` allowance when a baseline is compared.
:func:`length_gates` takes a length's row, the run's intervals, the comparison, thresholds,
allowances and the inconclusive policy and returns its :class:`LengthGates`: each gate with
its verdict and outcome, the worst outcome (the gate column's cell), and each outcome with
its reason (:mod:`pytest_niah.measure.gate_reasons`). :func:`comparison_gates` gives a
comparison's gates alone, for reports of saved runs. The gate test, terminal summary,
reports and offline command only call this module; how one verdict reads an interval
against a limit is :mod:`pytest_niah.measure.verdicts`; the comparison's verdicts of a slice
(paired or not, and ``n/m``) are :mod:`pytest_niah.measure.comparison_verdicts`'s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from pytest_niah.config.gate_expressions import Allowance, Thresholds
from pytest_niah.measure.comparison_verdicts import (
    ComparedRun,
    Slice,
    compare_verdicts,
    run_slices,
)
from pytest_niah.measure.gate_reasons import GateOutcome, gate_reason
from pytest_niah.measure.records import IntervalRow, MetricRow
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdict_text import verdict_message
from pytest_niah.measure.verdicts import Outcome, Verdict, minimum_verdict

MIN_AUC = "--niah-min-auc"
MIN_RATIO = "--niah-min-ratio"
COMPARE_FAIL = "--niah-compare-fail"
# Outcomes from worst to best: a length's (or a run's) outcome is its worst gate's.
OUTCOME_ORDER: tuple[Outcome, ...] = ("fail", "warn", "pass")


# -- gates and their outcomes ---------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    """One gate's verdict at one length, ready to show: which gate, the verdict, the outcome.

    Attributes:
        what: The option that set the gate, e.g. ``--niah-min-auc``.
        verdict: Its verdict.
        outcome: What the test does with it under the inconclusive policy.
    """

    what: str
    verdict: Verdict
    outcome: Outcome

    def message(self) -> str:
        """One line: the gate, the numbers, the verdict, and what would resolve it."""
        return verdict_message(self.what, self.verdict)

    def reason(self) -> str:
        """Why it warned or failed, in one short line (:func:`gate_reason`); "" for a pass."""
        return gate_reason(self.verdict, self.outcome)


@dataclass(frozen=True)
class LengthGates:
    """Every gate of one length (one arm and scoring): what :func:`length_gates` returns.

    Iterating it gives its gates, in order: the minimums, then the comparison's.

    Attributes:
        where: (arm, scoring, length).
        gates: Each gate with its verdict and outcome.
    """

    where: Slice
    gates: tuple[Gate, ...]

    def __iter__(self) -> Iterator[Gate]:
        return iter(self.gates)

    @property
    def outcome(self) -> Outcome | None:
        """The worst of its gates' outcomes; None when nothing gates the length."""
        return worst_outcome(g.outcome for g in self.gates)

    @property
    def cell(self) -> str:
        """The terminal table's gate column: the worst outcome, ``FAIL`` loud, ``-`` for none."""
        return gate_cell(self.gates)

    def outcomes(self, label: str) -> list[GateOutcome]:
        """Each gate's outcome with its reason, under the model's ``label``."""
        return [GateOutcome.of(label, self.where, g.verdict, g.outcome) for g in self.gates]


def gated_at(
    length: int, *, min_auc: Thresholds, min_ratio: Thresholds, allowances: Sequence[Allowance]
) -> bool:
    """Whether any gate applies at ``length``."""
    return min_auc.at(length) is not None or min_ratio.at(length) is not None or bool(allowances)


def length_gates(
    row: MetricRow,
    intervals: Sequence[IntervalRow],
    *,
    comparison: ComparedRun | None,
    min_auc: Thresholds,
    min_ratio: Thresholds,
    allowances: Sequence[Allowance],
    policy: str,
) -> LengthGates:
    """The gates of one per-length row, their outcomes under ``policy``, and why.

    Args:
        row: The row (one arm, scoring and length).
        intervals: The run's bootstrap intervals (those of other rows are ignored).
        comparison: The run against its baseline; ``None``: no comparison gate.
        min_auc: ``--niah-min-auc``.
        min_ratio: ``--niah-min-ratio``.
        allowances: ``--niah-compare-fail``.
        policy: ``--niah-inconclusive``.
    """
    where = (row.arm, row.scoring, row.length)
    compared = compare_verdicts(comparison, allowances, where) if comparison is not None else []
    gates = row_gates(
        row, intervals, min_auc=min_auc, min_ratio=min_ratio, compared=compared, policy=policy
    )
    return LengthGates(where, tuple(gates))


def comparison_gates(
    comparison: ComparedRun, allowances: Sequence[Allowance], policy: str
) -> list[LengthGates]:
    """The ``--niah-compare-fail`` gates of every slice of the current run, paired or not.

    A gated slice no baseline cell pairs with fails (*no paired cells*), as its gate test does.
    """
    return [
        LengthGates(where, _compare_gates(compare_verdicts(comparison, allowances, where), policy))
        for where in run_slices(comparison)
    ]


def _compare_gates(verdicts: Iterable[Verdict], policy: str) -> tuple[Gate, ...]:
    return tuple(Gate(COMPARE_FAIL, v, v.outcome(policy)) for v in verdicts)


def row_gates(
    row: MetricRow,
    intervals: Sequence[IntervalRow],
    *,
    min_auc: Thresholds,
    min_ratio: Thresholds,
    compared: Sequence[Verdict] = (),
    policy: str,
) -> list[Gate]:
    """Every gate of one row (:func:`length_gates`), given the comparison's verdicts of it.

    A metric without an interval in ``intervals`` gets an inconclusive verdict.
    """
    gates = []
    minimums = ((MIN_AUC, "auc", min_auc), (MIN_RATIO, "comparative_ratio", min_ratio))
    for what, metric, thresholds in minimums:  # the option, the metric it reads, its limits
        threshold = thresholds.at(row.length)
        if threshold is None:
            continue
        verdict = minimum_verdict(_interval(row, metric, intervals), threshold)
        gates.append(Gate(what, verdict, verdict.outcome(policy)))
    gates.extend(_compare_gates(compared, policy))
    return gates


def _interval(row: MetricRow, metric: str, intervals: Sequence[IntervalRow]) -> Interval:
    """The row's metric with its interval; without one, NaN bounds over the row's groups."""
    value: float = getattr(row, metric)
    for r in intervals:
        if (r.arm, r.scoring, r.length, r.metric) == (row.arm, row.scoring, row.length, metric):
            return Interval(metric, value, r.low, r.high, r.se, r.groups)
    return Interval(metric, value, math.nan, math.nan, math.nan, row.n_questions)


def worst_outcome(outcomes: Iterable[str]) -> Outcome | None:
    """The worst of some gates' outcomes (``fail`` > ``warn`` > ``pass``); None for none."""
    present = set(outcomes)
    return next((outcome for outcome in OUTCOME_ORDER if outcome in present), None)


def gate_cell(gates: Iterable[Gate]) -> str:
    """The table's gate column: the worst outcome of a length's gates."""
    outcome = worst_outcome(g.outcome for g in gates)
    return "-" if outcome is None else "FAIL" if outcome == "fail" else outcome
