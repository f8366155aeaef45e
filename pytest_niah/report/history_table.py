"""One metric's table of a history series: a row per saved run, a column per length.

The rows name each run (save date, run name, commit, model identity, and the machine when
the runs come from several); the columns hold the metric with its 95% interval. Two rows
that measure drift follow: the total change from the first run to the last and the largest
single step. :mod:`pytest_niah.report.history_terminal` lays the table out for the terminal,
:mod:`pytest_niah.report.history_view` for markdown and HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_niah.display import fmt, signed
from pytest_niah.measure.verdict_text import metric_digits
from pytest_niah.report.escape import one_line
from pytest_niah.results.history_series import Point, Series

TOTAL_ROW = "total change"
STEP_ROW = "largest step"


@dataclass(frozen=True)
class HistoryTable:
    """One metric's table of one series: info columns, length columns, their rows."""

    info_header: list[str]
    info_rows: list[list[str]]
    length_header: list[str]
    length_rows: list[list[str]]


def history_table(series: Series, metric: str, name_chars: int | None) -> HistoryTable:
    """The table of ``metric``; run names cut to ``name_chars`` (``None``: whole, one line)."""
    digits = metric_digits(metric)
    several = len(series.machines) > 1
    info_header = ["#", "saved", "run", "commit", "model", *(["machine"] if several else [])]
    info_rows = []
    for i, run in enumerate(series.runs):
        name = one_line(run.name) if name_chars is None else short_text(run.name, name_chars)
        row = [str(i + 1), run.date, name, run.commit_text, run.identity]
        info_rows.append(row + ([run.machine] if several else []))
    length_rows = [
        [_cell(series.point(i, metric, n), digits) for n in series.lengths]
        for i in range(len(series.runs))
    ]
    if len(series.runs) > 1:
        drifts = series.drift(metric)
        blank = [""] * (len(info_header) - 3)
        first_last = f"{TOTAL_ROW} #1→#{len(series.runs)}"
        info_rows.append(["", "", first_last, *blank])
        length_rows.append([signed(d.total, digits) for d in drifts])
        info_rows.append(["", "", STEP_ROW, *blank])
        length_rows.append([signed(d.largest, digits) for d in drifts])
    return HistoryTable(info_header, info_rows, [str(n) for n in series.lengths], length_rows)


def _cell(point: Point | None, digits: int) -> str:
    if point is None:
        return "-"
    if not point.has_interval:
        return fmt(point.value, digits)
    return (
        f"{fmt(point.value, digits)} [{fmt(point.low, digits - 1)},{fmt(point.high, digits - 1)}]"
    )


def short_text(text: str, chars: int) -> str:
    """``text`` on one line, cut to ``chars`` characters with "…" when longer."""
    flat = one_line(text)
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"
