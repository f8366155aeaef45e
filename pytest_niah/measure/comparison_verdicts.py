"""The comparison's verdicts: each compared metric's, and those of a slice nothing pairs with.

What the gate reads of a comparison (:class:`ComparedRun`, :class:`ComparedDelta`) comes in
as a protocol: measuring does not read saved runs. The comparison's own rules: a slice no
baseline cell pairs with is *no paired cells* under every policy (:func:`unpaired_verdict`);
a change of an ``n/m`` value is *inconclusive*, never past its limit (:func:`delta_verdict`,
decided in :func:`pytest_niah.measure.verdicts.compare_verdict`). The gates they become are
:mod:`pytest_niah.measure.gating`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, TypeVar

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import Verdict, compare_verdict

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
        (w, v) for w in run_slices(comparison) for v in compare_verdicts(comparison, allowances, w)
    ]


def run_slices(comparison: ComparedRun) -> Sequence[Slice]:
    """Every slice of the current run, in its order (paired or not)."""
    return list(comparison.run_cells or comparison.paired)
