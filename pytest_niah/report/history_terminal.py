"""The history of saved runs as plain-text lines for the terminal (``pytest-niah history``).

Per model label a title, then per metric a table whose length columns that do not fit
continue in blocks below, then the drift lines (:mod:`pytest_niah.report.history_words`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from pytest_niah.report.history_table import HistoryTable, history_table
from pytest_niah.report.history_words import (
    drift_texts,
    metric_heading,
    series_notes,
    series_title,
)
from pytest_niah.report.terminal_tables import WIDTH, aligned
from pytest_niah.results.history_series import DRIFT_MIN
from pytest_niah.results.run_history import History

_NAME_CHARS = 24


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
        lines += _wrap(series_title(series), width)
        for note in series_notes(series):
            lines += _wrap(f"  {note}", width, indent="    ")
        for metric in metrics:
            lines.append(metric_heading(series, metric))
            lines += _blocks(history_table(series, metric, _NAME_CHARS), width)
            drifts = series.drift(metric, min_change=min_change)
            for text in drift_texts(series, drifts):
                lines += _wrap(f"  drift: {text}", width, indent="    ")
            if len(series.runs) > 1 and not any(d.flagged for d in drifts):
                lines += _wrap(
                    f"  no drift: no length's total change is {min_change:g} or more and "
                    "larger than its largest single step",
                    width,
                    indent="    ",
                )
    return lines


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


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, width=width, subsequent_indent=indent, break_long_words=True) or [""]
