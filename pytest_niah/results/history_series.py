"""One model label's saved runs in order, per length and metric, and their drift.

A :class:`Series` holds the runs of one label (in the run store's order: save time, then
name) for one arm and scoring, and measures **drift**: per length, the total change of a
metric from the first run to the last (the sum of the changes between consecutive runs)
against the largest of those single changes. A total larger than every single step is a
slow drift that no comparison of one run with the one before showed: each upgrade passed its
``--niah-compare-fail`` allowance while the model kept getting worse (or better).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

from pytest_niah.results.saved_runs import SavedRun

# A total change smaller than this is never called drift, however the steps went.
DRIFT_MIN = 0.01
# Float noise: a total "larger" than the largest step by less than this is not larger.
_EPS = 1e-12


@dataclass(frozen=True)
class Point:
    """One run's value of one metric at one length, with its 95% interval (NaN if none)."""

    value: float
    low: float = math.nan
    high: float = math.nan

    @property
    def has_interval(self) -> bool:
        """Whether both ends of the interval are known."""
        return math.isfinite(self.low) and math.isfinite(self.high)


@dataclass(frozen=True)
class Drift:
    """How one metric at one length moved over a series' runs.

    Attributes:
        metric: The metric (a :class:`~pytest_niah.measure.records.MetricRow` field).
        length: The haystack length.
        first: Index of the first run with a value at this length (``-1``: none).
        last: Index of the last run with a value at this length.
        total: ``last`` value minus ``first`` value: the sum of the ``steps``.
        steps: The change between each two consecutive runs with a value.
        largest: The step of largest size (signed); NaN without steps.
        flagged: ``True`` when the total is at least ``min_change`` in size and larger than
            every single step: a slow drift no comparison with the previous run showed.
    """

    metric: str
    length: int
    first: int
    last: int
    total: float
    steps: tuple[float, ...]
    largest: float
    flagged: bool


@dataclass(frozen=True)
class Series:
    """The runs of one model label, oldest first, for one arm and scoring.

    Attributes:
        label: The model label.
        arm: The arm shown.
        scoring: The scoring shown.
        runs: The runs, ordered by save time, then name.
        lengths: Every length any run measured for this arm and scoring, ascending.
    """

    label: str
    arm: str
    scoring: str
    runs: tuple[SavedRun, ...]
    lengths: tuple[int, ...]

    @property
    def machines(self) -> tuple[str, ...]:
        """The machine ids the runs came from, in order of first appearance."""
        return tuple(dict.fromkeys(r.machine for r in self.runs))

    def point(self, index: int, metric: str, length: int) -> Point | None:
        """Run ``index``'s value of ``metric`` at ``length``; ``None`` when not measured."""
        results = self.runs[index].results
        try:
            row = results.row(self.arm, length, self.scoring)
        except KeyError:
            return None
        interval = results.interval(self.arm, length, metric, self.scoring)
        value = float(getattr(row, metric))
        if interval is None:
            return Point(value)
        return Point(value, float(interval.low), float(interval.high))

    def points(self, metric: str, length: int) -> list[Point | None]:
        """Every run's value of ``metric`` at ``length``, in run order."""
        return [self.point(i, metric, length) for i in range(len(self.runs))]

    def identity_changes(self) -> list[int]:
        """Indexes of the runs whose model identity differs from the run before (0 included)."""
        return [
            i
            for i, run in enumerate(self.runs)
            if i == 0 or run.identity != self.runs[i - 1].identity
        ]

    def drift(self, metric: str, *, min_change: float = DRIFT_MIN) -> list[Drift]:
        """Per length, the change of ``metric`` from the first run to the last (see module doc).

        Runs without a value at a length are passed over: the steps join the runs that have
        one.
        """
        out = []
        for length in self.lengths:
            known = [
                (i, p.value)
                for i, p in enumerate(self.points(metric, length))
                if p is not None and math.isfinite(p.value)
            ]
            if not known:
                out.append(Drift(metric, length, -1, -1, math.nan, (), math.nan, False))
                continue
            steps = tuple(b - a for (_, a), (_, b) in pairwise(known))
            total = known[-1][1] - known[0][1]
            largest = max(steps, key=abs) if steps else math.nan
            flagged = (
                len(steps) >= 2 and abs(total) >= min_change and abs(total) > abs(largest) + _EPS
            )
            out.append(
                Drift(metric, length, known[0][0], known[-1][0], total, steps, largest, flagged)
            )
        return out
