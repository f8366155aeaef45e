"""The gates of one per-length row: which apply, their verdicts, and what each does.

A length is gated by ``--niah-min-auc`` and ``--niah-min-ratio`` where they set a threshold
for it, and by every ``--niah-compare-fail`` allowance when a baseline is compared. Every
verdict is built by :mod:`pytest_niah.measure.verdicts`; this module picks the gates of a
row, feeds them their numbers, and applies the inconclusive policy. The comparison's
numbers come in as verdicts (:meth:`pytest_niah.results.compare.Comparison.gate_verdicts`):
measuring does not read saved runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_niah.config.gate_expressions import Allowance, Thresholds
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
# The minimum gates: the option and the metric it reads.
MINIMUMS = ((MIN_AUC, "auc"), (MIN_RATIO, "comparative_ratio"))


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


def gated_at(
    length: int, *, min_auc: Thresholds, min_ratio: Thresholds, allowances: Sequence[Allowance]
) -> bool:
    """Whether any gate applies at ``length``."""
    return min_auc.at(length) is not None or min_ratio.at(length) is not None or bool(allowances)


def row_gates(
    row: MetricRow,
    intervals: Sequence[IntervalRow],
    *,
    min_auc: Thresholds,
    min_ratio: Thresholds,
    compared: Sequence[Verdict] = (),
    policy: str,
) -> list[Gate]:
    """Every gate of one per-length row, with its verdict and outcome under ``policy``.

    Args:
        row: The row (one arm, scoring and length).
        intervals: The run's bootstrap intervals (those of other rows are ignored); a metric
            without one gets an inconclusive verdict.
        min_auc: ``--niah-min-auc``.
        min_ratio: ``--niah-min-ratio``.
        compared: The comparison's verdicts of this row (``--niah-compare-fail``).
        policy: ``--niah-inconclusive``.
    """
    gates = []
    for (what, metric), thresholds in zip(MINIMUMS, (min_auc, min_ratio), strict=True):
        threshold = thresholds.at(row.length)
        if threshold is None:
            continue
        verdict = minimum_verdict(_interval(row, metric, intervals), threshold)
        gates.append(Gate(what, verdict, verdict.outcome(policy)))
    gates.extend(Gate(COMPARE_FAIL, v, v.outcome(policy)) for v in compared)
    return gates


def _interval(row: MetricRow, metric: str, intervals: Sequence[IntervalRow]) -> Interval:
    """The row's metric with its interval; without one, NaN bounds over the row's groups."""
    value: float = getattr(row, metric)
    for r in intervals:
        if (r.arm, r.scoring, r.length, r.metric) == (row.arm, row.scoring, row.length, metric):
            return Interval(metric, value, r.low, r.high, r.se, r.groups)
    return Interval(metric, value, math.nan, math.nan, math.nan, row.n_questions)
