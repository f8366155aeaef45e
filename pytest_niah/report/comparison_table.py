"""The comparison table: a row per delta, its cells shared by the terminal, summary.md, HTML.

Each row names the cell (arm, scoring, length, paired cells, metric), then the baseline and
current values, the change with its 95% interval, and the verdict where the metric is gated;
a value the run's own table shows ``n/m`` shows so here, with a note saying why.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.display import fmt, signed
from pytest_niah.measure.meaningful import NOT_MEANINGFUL
from pytest_niah.measure.verdict_text import metric_digits
from pytest_niah.report.terminal_tables import aligned, interval_cell
from pytest_niah.results.compare import Comparison

COMPARISON_HEADER = (
    "arm",
    "scoring",
    "length",
    "cells",
    "metric",
    "baseline",
    "current",
    "change",
    "95% CI",
    "verdict",
)
# The text columns of the comparison table (arm, scoring, length, cells, metric) come first.
COMPARISON_TEXT_COLUMNS = 5


def comparison_cells(
    comparison: Comparison, allowances: Sequence[object] = ()
) -> tuple[list[str], list[list[str]]]:
    """The comparison table as a header and formatted rows, one per delta.

    Shared by the terminal (:func:`comparison_table`), summary.md and report.html. The
    verdict column is filled for the metrics ``allowances`` gate and empty for the others.
    """
    from pytest_niah.config.gate_expressions import Allowance

    gated = {a.metric: a for a in allowances if isinstance(a, Allowance)}
    body = []
    for d in comparison.deltas:
        digits = metric_digits(d.metric)
        allowance = gated.get(d.metric)
        # A value the run's own table shows n/m shows so here; so does its change.
        nm = bool(d.not_meaningful)
        body.append(
            [
                d.arm,
                d.scoring,
                str(d.length),
                str(d.cells),
                METRIC_LABELS.get(d.metric, d.metric),
                NOT_MEANINGFUL if d.baseline_not_meaningful else fmt(d.baseline, digits),
                NOT_MEANINGFUL if d.current_not_meaningful else fmt(d.current, digits),
                NOT_MEANINGFUL if nm else signed(d.delta, digits),
                NOT_MEANINGFUL
                if nm
                else interval_cell(d.delta, d.low, d.high, d.groups, digits - 1, sign="+"),
                d.verdict(allowance).state if allowance is not None else "",
            ]
        )
    return list(COMPARISON_HEADER), body


def comparison_notes(comparison: Comparison) -> list[str]:
    """One line per comparison row shown ``n/m``: which run's value means nothing, and why."""
    return [
        f"{METRIC_LABELS.get(d.metric, d.metric)} {NOT_MEANINGFUL} (not meaningful) at "
        f"{d.arm}/{d.scoring} L{d.length}: {d.not_meaningful} (no change is shown)"
        for d in comparison.deltas
        if d.not_meaningful
    ]


def comparison_table(comparison: Comparison, allowances: Sequence[object] = ()) -> list[str]:
    """Aligned lines: one row per delta (paired cells, interval, verdict where gated)."""
    header, body = comparison_cells(comparison, allowances)
    table = aligned(header, body, left=COMPARISON_TEXT_COLUMNS)
    accepted = [f"note: accepted difference: {d.describe()}" for d in comparison.allowed]
    return table + [f"note: {line}" for line in comparison_notes(comparison)] + accepted
