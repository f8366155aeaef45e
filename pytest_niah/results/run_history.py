"""The history of saved runs: each model label's runs in order, per length and metric.

Every ``--niah-save`` keeps a run; read together they show how a model's long-context
retrieval moved over upgrades. This module turns the saved runs of a store into one
:class:`Series` per model label (runs in the run store's order: save time, then name) and measures
**drift**: per length, the total change of a metric from the first run to the last (the
sum of the changes between consecutive runs) against the largest of those single changes.
A total larger than every single step is a slow drift that no comparison of one run with
the one before showed: each upgrade passed its ``--niah-compare-fail`` allowance while the
model kept getting worse (or better).

Only data here: the tables and the plot are drawn by :mod:`pytest_niah.report.history_view`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any

from pytest_niah.errors import ResultsError
from pytest_niah.results.history_metrics import DEFAULT_METRICS, metric_names
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.run_file import RunHeader, run_order
from pytest_niah.results.storage import RunStore, load_run

__all__ = [
    "DEFAULT_METRICS",
    "DRIFT_MIN",
    "Drift",
    "History",
    "Point",
    "SavedRun",
    "Series",
    "Skipped",
    "build_history",
    "load_history",
    "metric_names",
    "read_runs",
]

# A total change smaller than this is never called drift, however the steps went.
DRIFT_MIN = 0.01
# Shown digits of a commit id and of a model identity's digest.
COMMIT_DIGITS = 7
IDENTITY_DIGITS = 8
# Float noise: a total "larger" than the largest step by less than this is not larger.
_EPS = 1e-12


@dataclass(frozen=True)
class SavedRun:
    """One saved run with its provenance.

    Attributes:
        path: The run's file.
        name: The run's name (``--niah-save=NAME``).
        label: The model label it was saved for.
        saved_at: When it was saved (timezone-aware).
        machine: The machine id of its store folder, e.g. ``Linux-x86_64-cp311``.
        commit: The git commit it was saved at (``id``, ``branch``, ``dirty``; may be empty).
        results: Its results.
    """

    path: Path
    name: str
    label: str
    saved_at: datetime
    machine: str
    commit: Mapping[str, Any]
    results: NiahResults

    @property
    def commit_text(self) -> str:
        """The commit's short id, with ``+dirty`` for uncommitted changes; ``-`` for none."""
        sha = self.commit.get("id")
        if not isinstance(sha, str) or not sha:
            return "-"
        return sha[:COMMIT_DIGITS] + ("+dirty" if self.commit.get("dirty") is True else "")

    @property
    def identity(self) -> str:
        """The model identity's short digest: a change means other weights or settings."""
        return self.results.model.fingerprint[:IDENTITY_DIGITS]

    @property
    def date(self) -> str:
        """The save date, ``YYYY-MM-DD`` in UTC."""
        return self.saved_at.astimezone(timezone.utc).strftime("%Y-%m-%d")

    @property
    def order_key(self) -> tuple[datetime, str, str]:
        """This run's place in the order of saved runs (:func:`~.run_file.run_order`)."""
        return run_order(self.saved_at, self.name, self.path)


@dataclass(frozen=True)
class Skipped:
    """A run file or run left out of the history, and why (one line).

    Attributes:
        path: The run's file.
        reason: Why, naming the file or the run.
        unreadable: ``True`` when the file could not be read as a saved run; ``False`` when
            it was read but measured nothing for the arm and scoring shown.
    """

    path: Path
    reason: str
    unreadable: bool = True


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


@dataclass(frozen=True)
class History:
    """Every label's series, and what was left out of them."""

    series: tuple[Series, ...]
    skipped: tuple[Skipped, ...] = ()


def read_runs(
    store: Path, *, labels: Sequence[str] = (), machine: str | None = None
) -> tuple[list[SavedRun], list[Skipped]]:
    """Read every saved run in ``store`` (optionally of some labels and one machine id).

    One bad file never hides the rest: a file that cannot be read, or is not a valid saved
    run, is returned in the second list with the reason, and the others are read.

    Returns:
        The runs in history order (save time, then name), and the skipped files.
    """
    headers, unreadable = RunStore(Path(store)).headers(labels, machine)
    runs: list[SavedRun] = []
    skipped = [Skipped(bad.path, bad.reason) for bad in unreadable]
    for header in headers:
        try:
            runs.append(_read_run(header))
        except ResultsError as exc:
            skipped.append(Skipped(header.path, str(exc)))
    return runs, skipped


def build_history(
    runs: Iterable[SavedRun], *, arm: str = "onehop", scoring: str = "whole"
) -> History:
    """One series per model label (labels in order of their first run), runs in order.

    A run that measured nothing for ``arm`` and ``scoring`` is left out of its series and
    listed in :attr:`History.skipped`.
    """
    by_label: dict[str, list[SavedRun]] = {}
    skipped: list[Skipped] = []
    for run in sorted(runs, key=lambda r: r.order_key):
        if not run.results.rows("length", arm, scoring):
            reason = f"run {run.name!r} of {run.label!r} has no {arm}/{scoring} rows"
            skipped.append(Skipped(run.path, reason, unreadable=False))
            continue
        by_label.setdefault(run.label, []).append(run)
    series = tuple(
        Series(
            label=label,
            arm=arm,
            scoring=scoring,
            runs=tuple(found),
            lengths=tuple(
                sorted(
                    {row.length for r in found for row in r.results.rows("length", arm, scoring)}
                )
            ),
        )
        for label, found in by_label.items()
    )
    return History(series, tuple(skipped))


def load_history(
    store: Path,
    *,
    labels: Sequence[str] = (),
    machine: str | None = None,
    arm: str = "onehop",
    scoring: str = "whole",
) -> History:
    """:func:`read_runs` then :func:`build_history`; unreadable files are in ``skipped``."""
    runs, unreadable = read_runs(store, labels=labels, machine=machine)
    history = build_history(runs, arm=arm, scoring=scoring)
    return History(history.series, (*unreadable, *history.skipped))


def _read_run(header: RunHeader) -> SavedRun:
    path = header.path
    try:
        metadata, results = load_run(path)
    except (AttributeError, TypeError, ValueError, LookupError, RecursionError) as exc:
        raise ResultsError(f"{path}: not a pytest-niah saved run ({type(exc).__name__})") from None
    commit = metadata.get("commit")
    return SavedRun(
        path=Path(path),
        name=header.name,
        label=header.label,
        saved_at=header.saved_at,
        machine=header.machine,
        commit=commit if isinstance(commit, dict) else {},
        results=results,
    )
