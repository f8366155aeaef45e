"""The history of saved runs: each model label's runs in order, per length and metric.

Every ``--niah-save`` keeps a run; read together they show how a model's long-context
retrieval moved over upgrades. This module turns the saved runs of a store
(:mod:`pytest_niah.results.saved_runs`) into one
:class:`~pytest_niah.results.history_series.Series` per model label, whose drift shows what
no comparison of one run with the one before showed.

Only data here: the tables and the plot are drawn by :mod:`pytest_niah.report.history_view`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_niah.results.history_metrics import DEFAULT_METRICS, metric_names
from pytest_niah.results.history_series import Series
from pytest_niah.results.saved_runs import SavedRun, Skipped, read_runs

__all__ = [
    "DEFAULT_METRICS",
    "History",
    "build_history",
    "load_history",
    "metric_names",
]


@dataclass(frozen=True)
class History:
    """Every label's series, and what was left out of them."""

    series: tuple[Series, ...]
    skipped: tuple[Skipped, ...] = ()


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
    """:func:`~.saved_runs.read_runs`, then :func:`build_history`.

    Unreadable files are in the history's ``skipped``, before the runs left out of a series.
    """
    runs, unreadable = read_runs(store, labels=labels, machine=machine)
    history = build_history(runs, arm=arm, scoring=scoring)
    return History(history.series, (*unreadable, *history.skipped))
