"""The gate of one length, in one place: which gates apply, their verdicts, what they do.

A length is gated by ``--niah-min-auc`` and ``--niah-min-ratio`` where they set a threshold
for it, and by every ``--niah-compare-fail`` allowance when a baseline is compared.
:func:`length_gates` takes a length's row, the run's intervals, the comparison, thresholds,
allowances and the inconclusive policy and returns its :class:`LengthGates`: each gate with
its verdict and outcome, the worst outcome (the gate column's cell), and each outcome with
its reason (:mod:`pytest_niah.measure.gate_reasons`). :func:`comparison_gates` gives a
comparison's gates alone, for reports of saved runs. The gate test, terminal summary,
reports and offline command only call this module; how one verdict reads an interval
against a limit is :mod:`pytest_niah.measure.verdicts`. The comparison's own rules: a slice
no baseline cell pairs with is *no paired cells* under every policy
(:func:`unpaired_verdict`); a change of an ``n/m`` value is *inconclusive*, never past its
limit (:func:`delta_verdict`). The comparison comes in as :class:`ComparedRun`: measuring
does not read saved runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pytest_niah.config.gate_expressions import Allowance, Thresholds
from pytest_niah.measure.gate_reasons import GateOutcome, gate_reason
from pytest_niah.measure.records import IntervalRow, MetricRow
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import (
    Outcome,
    Verdict,
    compare_verdict,
    minimum_verdict,
    verdict_message,
)

MIN_AUC = "--niah-min-auc"
MIN_RATIO = "--niah-min-ratio"
COMPARE_FAIL = "--niah-compare-fail"
# Outcomes from worst to best: a length's (or a run's) outcome is its worst gate's.
OUTCOME_ORDER: tuple[Outcome, ...] = ("fail", "warn", "pass")
Slice = tuple[str, str, int]  # (arm, scoring, length)


class ComparedDelta(Protocol):
    """What the gate reads of one compared metric: a :class:`pytest_niah.results.compare.Delta`."""

    @property
    def arm(self) -> str:
        """The arm."""

    @property
    def scoring(self) -> str:
        """The scoring."""

    @property
    def length(self) -> int:
        """The length."""

    @property
    def metric(self) -> str:
        """The metric."""

    @property
    def baseline(self) -> float:
        """The baseline's value (NaN: undefined there)."""

    @property
    def cells(self) -> int:
        """Cells paired with the baseline."""

    @property
    def run_cells(self) -> int | None:
        """This run's cells of the slice; ``None``: as many as were paired."""

    @property
    def unresolved(self) -> str:
        """Why the grid cannot show a change here (coverage), or ""."""

    @property
    def not_meaningful(self) -> str:
        """Why the change means nothing (``n/m``), or ""."""

    def interval(self) -> Interval:
        """The change and its paired interval."""


D = TypeVar("D", bound=ComparedDelta)


class ComparedRun(Protocol):
    """What the gate reads of a comparison: a :class:`pytest_niah.results.compare.Comparison`."""

    @property
    def deltas(self) -> Sequence[ComparedDelta]:
        """One per compared (arm, scoring, length, metric)."""

    @property
    def paired(self) -> dict[Slice, int]:
        """Paired cells per slice."""

    @property
    def run_cells(self) -> dict[Slice, int]:
        """This run's cells per slice, paired or not."""


# -- the comparison's verdicts ------------------------------------------------------------------


def delta_verdict(delta: ComparedDelta, allowance: Allowance) -> Verdict:
    """The verdict on one compared metric under ``allowance`` (``n/m``: inconclusive)."""
    return compare_verdict(
        delta.interval(),
        allowance.allowed(delta.baseline),
        baseline_undefined=math.isnan(delta.baseline),
        unresolved=delta.unresolved,
        paired_cells=delta.cells,
        run_cells=delta.cells if delta.run_cells is None else delta.run_cells,
        not_meaningful=delta.not_meaningful,
    )


def unpaired_verdict(allowance: Allowance, run_cells: int) -> Verdict:
    """The verdict of a gated slice that no cell of the baseline pairs with: *no paired cells*.

    An error under every inconclusive policy (nothing was compared, so nothing can pass).
    A relative allowance has no baseline value to scale: its limit is NaN.
    """
    nan = math.nan
    return compare_verdict(
        Interval(allowance.metric, nan, nan, nan, nan, groups=0),
        nan if allowance.relative else allowance.amount,
        paired_cells=0,
        run_cells=run_cells,
    )


def delta_verdicts(
    deltas: Sequence[D], allowances: Sequence[Allowance], where: Slice | None = None
) -> list[tuple[D, Verdict]]:
    """Each gated delta (of one slice, or all) with its verdict, in the comparison's order."""
    return [
        (d, delta_verdict(d, allowance))
        for d in deltas
        if where is None or (d.arm, d.scoring, d.length) == where
        for allowance in allowances
        if allowance.metric == d.metric
    ]


def compare_verdicts(
    comparison: ComparedRun, allowances: Sequence[Allowance], where: Slice
) -> list[Verdict]:
    """The ``--niah-compare-fail`` verdicts of one slice of the current run, paired or not."""
    if not comparison.paired.get(where):
        return [unpaired_verdict(a, comparison.run_cells.get(where, 0)) for a in allowances]
    return [v for _, v in delta_verdicts(comparison.deltas, allowances, where)]


def slice_verdicts(
    comparison: ComparedRun, allowances: Sequence[Allowance]
) -> list[tuple[Slice, Verdict]]:
    """:func:`compare_verdicts` of every slice of the current run, paired or not, in order."""
    return [
        (w, v) for w in _slices(comparison) for v in compare_verdicts(comparison, allowances, w)
    ]


def _slices(comparison: ComparedRun) -> Sequence[Slice]:
    """Every slice of the current run, in its order (paired or not)."""
    return list(comparison.run_cells or comparison.paired)


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
        for where in _slices(comparison)
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
