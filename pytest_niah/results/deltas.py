"""The change of each metric at one length, on the cells a run and its baseline both measured.

:func:`~pytest_niah.results.compare.compare_results` pairs the cells; each slice's
:class:`Delta` records are built here, their intervals from a paired bootstrap over needle
groups. Their verdicts are :mod:`pytest_niah.measure.gating`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.measure.comparison_verdicts import delta_verdict
from pytest_niah.measure.metrics import METRICS, QuestionScores, point_metrics
from pytest_niah.measure.stats import Interval, paired_bootstrap_delta
from pytest_niah.measure.verdicts import Verdict

Slice = tuple[str, str, int]  # (arm, scoring, length)


@dataclass(frozen=True)
class Delta:
    """The change of one metric at one length, on the cells both runs measured.

    Attributes:
        baseline: The metric of the baseline run on the paired cells.
        current: The metric of the current run on the same cells.
        delta: ``current - baseline`` (NaN where either is undefined).
        low: Lower bound of the 95% paired-bootstrap interval of ``delta``.
        high: Upper bound.
        se: Standard error of ``delta`` (bootstrap).
        groups: Needle groups paired.
        cells: Paired cases.
        unresolved: Why the grid cannot show a change at this length (coverage), or "".
        run_cells: This run's cases at this arm, scoring and length (paired or not);
            ``None``: as many as were paired.
        current_not_meaningful: Why this run's value means nothing (its own table shows
            ``n/m``), or "" (:func:`~pytest_niah.measure.meaningful.normalized_not_meaningful`).
        baseline_not_meaningful: The same for the baseline's value.
    """

    arm: str
    scoring: str
    length: int
    metric: str
    baseline: float
    current: float
    delta: float
    low: float
    high: float
    se: float
    groups: int
    cells: int
    unresolved: str = ""
    run_cells: int | None = None
    current_not_meaningful: str = ""
    baseline_not_meaningful: str = ""

    @property
    def not_meaningful(self) -> str:
        """Why the change means nothing (either side's value does not), or ""."""
        sides = [
            f"{side}: {why}"
            for side, why in (
                ("this run", self.current_not_meaningful),
                ("the baseline", self.baseline_not_meaningful),
            )
            if why
        ]
        return "; ".join(sides)

    def interval(self) -> Interval:
        """The change as an :class:`Interval`."""
        return Interval(self.metric, self.delta, self.low, self.high, self.se, self.groups)

    def verdict(self, allowance: Allowance) -> Verdict:
        """Its verdict under ``allowance`` (:func:`~.comparison_verdicts.delta_verdict`)."""
        return delta_verdict(self, allowance)


def metric_deltas(
    where: Slice,
    cells: tuple[int, int],
    current: list[QuestionScores],
    baseline: list[QuestionScores],
    n_resamples: int,
    seed: int,
    unresolved: str,
) -> list[Delta]:
    """One delta per metric; ``cells`` is (paired, this run's); no resamples, no interval."""
    cur, base = point_metrics(current), point_metrics(baseline)
    shared = len({q.group_id for q in current} & {q.group_id for q in baseline})
    out = []
    for metric in METRICS:
        interval = (
            paired_bootstrap_delta(
                current, baseline, metric=metric, n_resamples=n_resamples, seed=seed
            )
            if n_resamples
            else Interval(metric, math.nan, math.nan, math.nan, math.nan, shared)
        )
        out.append(
            Delta(
                *where,
                metric=metric,
                baseline=base[metric],
                current=cur[metric],
                delta=cur[metric] - base[metric],
                low=interval.low,
                high=interval.high,
                se=interval.se,
                groups=interval.groups,
                cells=cells[0],
                unresolved=unresolved,
                run_cells=cells[1],
            )
        )
    return out
