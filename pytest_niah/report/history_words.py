"""The words every view of the history shares: a series' title, its notes, its drift lines.

The terminal (:mod:`pytest_niah.report.history_terminal`), ``history.md`` and the HTML
page or section (:mod:`pytest_niah.report.history_view`) say the same things in these words.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.display import fmt, signed
from pytest_niah.measure.verdict_text import metric_digits
from pytest_niah.report.escape import one_line
from pytest_niah.results.history_metrics import metric_label
from pytest_niah.results.history_series import Drift, Series

DRIFT_EXPLAINED = (
    "Drift: per length, the total change from the first run to the last is the sum of the "
    "changes between consecutive runs. When the total is larger than every single change "
    "(and at least {min_change:g}), the runs drifted slowly: each upgrade may have passed "
    "its --niah-compare-fail allowance against the run before while the total did not."
)


def series_title(series: Series) -> str:
    """The series' label, arm and scoring, its run count and the dates they span."""
    runs = series.runs
    span = runs[0].date if runs[0].date == runs[-1].date else f"{runs[0].date} to {runs[-1].date}"
    count = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    return f"{series.label}, arm {series.arm}, scoring {series.scoring}: {count}, {span}"


def metric_heading(series: Series, metric: str) -> str:
    """A metric's heading: its label, then "[95% CI] per length" where a run has an interval."""
    has = any(
        p is not None and p.has_interval for n in series.lengths for p in series.points(metric, n)
    )
    return metric_label(metric) + (" [95% CI] per length" if has else " per length")


def series_notes(series: Series) -> list[str]:
    """Notes on the series: where the model identity changed, and runs from several machines."""
    notes = []
    changes = [i for i in series.identity_changes() if i > 0]
    if changes:
        runs = ", ".join(f"#{i + 1} ({series.runs[i].name})" for i in changes)
        notes.append(f"note: the model identity changed at run {runs}")
    if len(series.machines) > 1:
        notes.append(
            f"note: runs from {len(series.machines)} machines: " + ", ".join(series.machines)
        )
    return notes


def drift_texts(series: Series, drifts: Sequence[Drift]) -> list[str]:
    """One sentence per length that drifted (:attr:`~.history_series.Drift.flagged`)."""
    out = []
    for d in drifts:
        if not d.flagged:
            continue
        digits = metric_digits(d.metric)
        first, last = series.runs[d.first], series.runs[d.last]
        out.append(
            f"{metric_label(d.metric)} at {d.length} tokens moved {signed(d.total, digits)} "
            f"from run #{d.first + 1} ({one_line(first.name)}) to run #{d.last + 1} "
            f"({one_line(last.name)}), the sum of {len(d.steps)} steps none larger than "
            f"{fmt(abs(d.largest), digits)}: no comparison with the previous run showed it"
        )
    return out
