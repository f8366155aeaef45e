"""The comparison figure: baseline versus current, one panel per metric.

Drawn when the report compares runs (``--niah-compare``); its lines, markers and bands
follow the house style of :mod:`pytest_niah.report.house_style`. matplotlib is imported only
inside the drawing helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.report.figure_data import is_finite
from pytest_niah.report.house_style import PALETTE, figure_style
from pytest_niah.report.plotting import (
    chance_line,
    finish_axes,
    lengths_axis,
    new_figure,
    outside_legend,
    png_bytes,
    unit_axis,
)

if TYPE_CHECKING:
    from pytest_niah.report.comparison import ReportComparison
    from pytest_niah.results.compare import Delta


@dataclass(frozen=True)
class ComparisonFigure:
    """The comparison figure's HTML id, title and caption (drawn by :func:`comparison_figure`)."""

    id: str = "fig-comparison"
    title: str = "Baseline versus current"
    caption: str = (
        "Each metric per length on the cells both runs measured: the baseline (dashed, open "
        "markers) and this run (solid); band: the baseline plus the 95% paired-bootstrap "
        "interval of the change; dashed grey: chance."
    )


COMPARISON_FIGURE = ComparisonFigure()
COMPARISON_METRICS = ("normalized", "comparative_ratio", "auc", "separation")


def comparison_figure(comparisons: Sequence[ReportComparison]) -> bytes:
    """Baseline versus current, one panel per metric, a colour per model x arm x scoring."""
    lengths = sorted({d.length for c in comparisons for d in c.comparison.deltas})
    lines = list(
        dict.fromkeys(
            (index, d.arm, d.scoring)
            for index, c in enumerate(comparisons)
            for d in c.comparison.deltas
        )
    )
    with figure_style():
        fig, axes = new_figure(rows=2, cols=2, row_height=3.8)
        for ax, metric in zip(axes, COMPARISON_METRICS, strict=True):
            for number, (index, arm, scoring) in enumerate(lines):
                comparison = comparisons[index]
                deltas = sorted(
                    (
                        d
                        for d in comparison.comparison.deltas
                        if (d.arm, d.scoring, d.metric) == (arm, scoring, metric)
                    ),
                    key=lambda d: d.length,
                )
                if deltas:
                    name = f"{comparison.label} · {arm}/{scoring}"
                    _baseline_and_current(ax, deltas, name, PALETTE[number % len(PALETTE)])
            if metric in ("comparative_ratio", "auc"):
                chance_line(ax)
                unit_axis(ax)
            lengths_axis(ax, lengths)
            finish_axes(ax, METRIC_LABELS.get(metric, metric), METRIC_LABELS.get(metric, metric))
        outside_legend(fig, axes)
        return png_bytes(fig)


def _baseline_and_current(ax: Any, deltas: Sequence[Delta], name: str, color: str) -> None:
    """One line's baseline (dashed, open markers), this run (solid) and the change's band."""
    xs = [d.length for d in deltas]
    ax.plot(
        xs,
        [d.baseline for d in deltas],
        color=color,
        linestyle=(0, (4, 2)),
        marker="s",
        markerfacecolor="white",
        label=f"{name}: baseline",
    )
    ax.plot(xs, [d.current for d in deltas], color=color, marker="o", label=f"{name}: this run")
    band = [d for d in deltas if is_finite(d.baseline) and is_finite(d.low) and is_finite(d.high)]
    if band:
        ax.fill_between(
            [d.length for d in band],
            [d.baseline + d.low for d in band],
            [d.baseline + d.high for d in band],
            color=color,
            alpha=0.15,
            linewidth=0,
        )
