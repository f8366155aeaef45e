"""The history of saved runs as markdown, and as an HTML page or a section of report.html.

The data come from :mod:`pytest_niah.results.run_history`; each table has one row per run
(save date, run name, commit, model identity) and one column per length with the metric
and its 95% interval, then two rows that measure drift: the total change from the first run
to the last (the sum of the steps between consecutive runs) and the largest single step.
A length whose total is larger than every single step gets a drift line below the table.
The terminal lines are in :mod:`pytest_niah.report.history_terminal`, the words every view
shares in :mod:`pytest_niah.report.history_words`; the plot is drawn by
:mod:`pytest_niah.report.history_plot`.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

from pytest_niah.report.escape import html_text, md_text
from pytest_niah.report.history_table import history_table
from pytest_niah.report.history_words import (
    DRIFT_EXPLAINED,
    drift_texts,
    metric_heading,
    series_notes,
    series_title,
)
from pytest_niah.report.html_parts import html_page, table
from pytest_niah.report.markdown_and_csv import markdown_table
from pytest_niah.results.history_series import DRIFT_MIN
from pytest_niah.results.run_history import History

__all__ = [
    "history_html",
    "history_markdown",
    "history_section",
]


# -- markdown ---------------------------------------------------------------------------------


def history_markdown(
    history: History, metrics: Sequence[str], *, min_change: float = DRIFT_MIN
) -> str:
    """The history as markdown (``history.md``): every text from the user is escaped."""
    parts = ["# History of saved runs", "", md_text(DRIFT_EXPLAINED.format(min_change=min_change))]
    for series in history.series:
        parts += ["", f"## {md_text(series_title(series))}"]
        for note in series_notes(series):
            parts += ["", md_text(note)]
        for metric in metrics:
            parts += ["", f"### {md_text(metric_heading(series, metric))}", ""]
            cells = history_table(series, metric, None)
            body = [i + c for i, c in zip(cells.info_rows, cells.length_rows, strict=True)]
            parts += markdown_table(
                cells.info_header + cells.length_header, body, left=len(cells.info_header)
            )
            drifts = series.drift(metric, min_change=min_change)
            texts = drift_texts(series, drifts)
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
        parts.append(f"<h3>{html_text(series_title(series))}</h3>")
        parts.extend(f'<p class="muted">{html_text(n)}</p>' for n in series_notes(series))
        for metric in metrics:
            cells = history_table(series, metric, None)
            body = [i + c for i, c in zip(cells.info_rows, cells.length_rows, strict=True)]
            parts.append(f"<h4>{html_text(metric_heading(series, metric))}</h4>")
            parts.append(
                table(
                    cells.info_header + cells.length_header,
                    body,
                    numeric_from=len(cells.info_header),
                )
            )
            texts = drift_texts(series, series.drift(metric, min_change=min_change))
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
    lead = f'<p class="lead">{html_text(labels)}</p>'
    header = f"<header><h1>pytest-niah history</h1>{lead}</header>"
    return html_page("pytest-niah history: " + labels, [header, section])
