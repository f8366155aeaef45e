"""The history of saved runs as a terminal table, markdown, and an HTML page or section.

The data come from :mod:`pytest_niah.results.run_history`; each table has one row per run
(save date, run name, commit, model identity) and one column per length with the metric
and its 95% interval, then two rows that measure drift: the total change from the first run
to the last (the sum of the steps between consecutive runs) and the largest single step.
A length whose total is larger than every single step gets a drift line below the table.
The plot is drawn by :mod:`pytest_niah.report.history_plot`.
"""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Sequence

from pytest_niah.display import fmt, signed
from pytest_niah.report.escape import html_text, md_text, one_line
from pytest_niah.report.history_table import HistoryTable, history_table
from pytest_niah.report.html import CSS, table
from pytest_niah.report.markdown_and_csv import markdown_table
from pytest_niah.report.terminal_tables import WIDTH, aligned, metric_digits
from pytest_niah.results.history_metrics import metric_label
from pytest_niah.results.history_series import DRIFT_MIN, Drift, Series
from pytest_niah.results.run_history import History

__all__ = [
    "DRIFT_EXPLAINED",
    "history_html",
    "history_lines",
    "history_markdown",
    "history_section",
]

DRIFT_EXPLAINED = (
    "Drift: per length, the total change from the first run to the last is the sum of the "
    "changes between consecutive runs. When the total is larger than every single change "
    "(and at least {min_change:g}), the runs drifted slowly: each upgrade may have passed "
    "its --niah-compare-fail allowance against the run before while the total did not."
)
_NAME_CHARS = 24


# -- terminal ---------------------------------------------------------------------------------


def history_lines(
    history: History,
    metrics: Sequence[str],
    *,
    min_change: float = DRIFT_MIN,
    width: int = WIDTH,
) -> list[str]:
    """The history as plain-text lines of at most ``width`` columns.

    Per model label: a title line, then per metric a table (length columns that do not fit
    continue in a block below, keeping the ``#`` and ``run`` columns), then a drift line for
    each length that drifted.
    """
    lines: list[str] = []
    for series in history.series:
        if lines:
            lines.append("")
        lines += _wrap(_title(series), width)
        for note in _notes(series):
            lines += _wrap(f"  {note}", width, indent="    ")
        for metric in metrics:
            lines.append(f"{metric_label(metric)}{_ci(series, metric)}")
            lines += _blocks(history_table(series, metric, _NAME_CHARS), width)
            drifts = series.drift(metric, min_change=min_change)
            for text in _drift_texts(series, drifts):
                lines += _wrap(f"  drift: {text}", width, indent="    ")
            if len(series.runs) > 1 and not any(d.flagged for d in drifts):
                lines += _wrap(
                    f"  no drift: no length's total change is {min_change:g} or more and "
                    "larger than its largest single step",
                    width,
                    indent="    ",
                )
    return lines


# -- markdown ---------------------------------------------------------------------------------


def history_markdown(
    history: History, metrics: Sequence[str], *, min_change: float = DRIFT_MIN
) -> str:
    """The history as markdown (``history.md``): every text from the user is escaped."""
    parts = ["# History of saved runs", "", md_text(DRIFT_EXPLAINED.format(min_change=min_change))]
    for series in history.series:
        parts += ["", f"## {md_text(_title(series))}"]
        for note in _notes(series):
            parts += ["", md_text(note)]
        for metric in metrics:
            parts += ["", f"### {md_text(metric_label(metric) + _ci(series, metric))}", ""]
            cells = history_table(series, metric, None)
            body = [i + c for i, c in zip(cells.info_rows, cells.length_rows, strict=True)]
            parts += markdown_table(
                cells.info_header + cells.length_header, body, left=len(cells.info_header)
            )
            drifts = series.drift(metric, min_change=min_change)
            texts = _drift_texts(series, drifts)
            if texts:
                parts.append("")
                parts += [f"- **Drift**: {md_text(text)}" for text in texts]
            elif len(series.runs) > 1:
                parts += ["", "No drift beyond the largest single step."]
    if history.skipped:
        parts += ["", "## Left out", ""]
        parts += [f"- {md_text(item.reason)}" for item in history.skipped]
    return "\n".join(parts) + "\n"


# -- HTML -------------------------------------------------------------------------------------


def history_section(
    history: History,
    metrics: Sequence[str],
    png: bytes | None = None,
    *,
    min_change: float = DRIFT_MIN,
) -> str:
    """The history as one ``<section id="history">`` that report.html can include.

    Args:
        history: The series to show.
        metrics: The metrics, one table each per series.
        png: The plot (:func:`~pytest_niah.report.history_plot.history_figure`), embedded
            as a data URI; none when ``None``.
        min_change: The smallest total change called drift.
    """
    parts = [
        '<section id="history"><h2>History of saved runs</h2>',
        f'<p class="muted">{html_text(DRIFT_EXPLAINED.format(min_change=min_change))}</p>',
    ]
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        alt = "History: " + ", ".join(s.label for s in history.series)
        parts.append(
            f'<figure id="history-plot"><img src="data:image/png;base64,{data}" '
            f'alt="{html_text(alt)}"><figcaption><b>History.</b> Each length&#x27;s value '
            "per saved run, oldest first, with its 95% interval; labels mark the runs whose "
            "model identity changed.</figcaption></figure>"
        )
    for series in history.series:
        parts.append(f"<h3>{html_text(_title(series))}</h3>")
        parts.extend(f'<p class="muted">{html_text(n)}</p>' for n in _notes(series))
        for metric in metrics:
            cells = history_table(series, metric, None)
            body = [i + c for i, c in zip(cells.info_rows, cells.length_rows, strict=True)]
            parts.append(f"<h4>{html_text(metric_label(metric) + _ci(series, metric))}</h4>")
            parts.append(
                table(
                    cells.info_header + cells.length_header,
                    body,
                    numeric_from=len(cells.info_header),
                )
            )
            texts = _drift_texts(series, series.drift(metric, min_change=min_change))
            if texts:
                items = "".join(f"<li><b>Drift</b>: {html_text(t)}</li>" for t in texts)
                parts.append(f'<ul class="verdicts">{items}</ul>')
    if history.skipped:
        items = "".join(f"<li>{html_text(s.reason)}</li>" for s in history.skipped)
        parts.append(f'<h3>Left out</h3><ul class="verdicts">{items}</ul>')
    parts.append("</section>")
    return "\n".join(parts)


def history_html(
    history: History,
    metrics: Sequence[str],
    png: bytes | None = None,
    *,
    min_change: float = DRIFT_MIN,
) -> str:
    """A self-contained page (``history.html``) holding :func:`history_section`."""
    labels = ", ".join(s.label for s in history.series)
    section = history_section(history, metrics, png, min_change=min_change)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html_text('pytest-niah history: ' + labels)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            "<main>",
            f'<header><h1>pytest-niah history</h1><p class="lead">{html_text(labels)}</p></header>',
            section,
            "</main>",
            "</body>",
            "</html>",
            "",
        ]
    )


# -- shared pieces ----------------------------------------------------------------------------


def _title(series: Series) -> str:
    runs = series.runs
    span = runs[0].date if runs[0].date == runs[-1].date else f"{runs[0].date} to {runs[-1].date}"
    count = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    return f"{series.label}, arm {series.arm}, scoring {series.scoring}: {count}, {span}"


def _ci(series: Series, metric: str) -> str:
    has = any(
        p is not None and p.has_interval for n in series.lengths for p in series.points(metric, n)
    )
    return " [95% CI] per length" if has else " per length"


def _notes(series: Series) -> list[str]:
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


def _blocks(cells: HistoryTable, width: int) -> list[str]:
    """Aligned tables, the length columns split into blocks that fit ``width``."""
    left = len(cells.info_header)
    lines = aligned(cells.info_header, [list(r) for r in cells.info_rows], left=left)
    info_width = max(len(line) for line in lines)
    # The "#" and "run" columns carry on into continuation blocks.
    keep = [0, 2]
    kept = aligned(
        [cells.info_header[k] for k in keep],
        [[r[k] for k in keep] for r in cells.info_rows],
        left=2,
    )
    kept_width = max(len(line) for line in kept)
    col_widths = [
        max(len(cells.length_header[j]), *(len(r[j]) for r in cells.length_rows))
        for j in range(len(cells.length_header))
    ]
    # The first block holds the run columns and what fits beside them (maybe nothing).
    # Every line starts with two spaces.
    blocks: list[list[int]] = [[]]
    used = 2 + info_width
    for j, w in enumerate(col_widths):
        if used + 2 + w <= width:
            blocks[-1].append(j)
            used += 2 + w
        else:
            blocks.append([j])
            used = 2 + kept_width + 2 + w
    out: list[str] = []
    for b, columns in enumerate(blocks):
        header = cells.info_header if b == 0 else [cells.info_header[k] for k in keep]
        info = cells.info_rows if b == 0 else [[r[k] for k in keep] for r in cells.info_rows]
        body = [
            i + [row[j] for j in columns] for i, row in zip(info, cells.length_rows, strict=True)
        ]
        if b:
            out.append("  (continued)")
        out.extend(
            "  " + line
            for line in aligned(
                header + [cells.length_header[j] for j in columns], body, left=len(header)
            )
        )
    return out


def _drift_texts(series: Series, drifts: Sequence[Drift]) -> list[str]:
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


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, width=width, subsequent_indent=indent, break_long_words=True) or [""]
