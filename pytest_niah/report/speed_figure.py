"""The report's speed figure: tokens/s of model time against haystack length.

One line per model (this run), and where a comparison baseline is loaded its line beside it
(dashed, open markers). A measurement, never a verdict: no gate reads it. Lengths with no
model time (read from the embedding cache) have no point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_niah.report.house_style import PALETTE, figure_style
from pytest_niah.report.plotting import (
    finish_axes,
    lengths_axis,
    new_figure,
    outside_legend,
    png_bytes,
)
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.speed_record import SpeedRecord

if TYPE_CHECKING:
    from pytest_niah.report.comparison import ReportComparison

SPEED_FIGURE_ID = "fig-speed"
LOG_ABOVE = 30.0  # fastest / slowest tokens/s past which the axis is logarithmic


def measured(speed: SpeedRecord | None) -> list[tuple[int, float]]:
    """(length, tokens/s) of each length with model time, shortest first."""
    if speed is None:
        return []
    return [
        (entry.length, entry.tokens_per_second)
        for entry in speed.lengths
        if entry.tokens_per_second is not None
    ]


def speed_figure(
    results: Sequence[NiahResults],
    labels: Sequence[str],
    baselines: Sequence[SpeedRecord | None] = (),
) -> bytes:
    """Tokens/s per length, a colour per model; ``baselines[i]`` beside model ``i``."""
    lengths: set[int] = set()
    rates: list[float] = []
    with figure_style():
        fig, (ax,) = new_figure()
        for index, (result, label) in enumerate(zip(results, labels, strict=True)):
            color = PALETTE[index % len(PALETTE)]
            current = measured(result.speed)
            base = measured(baselines[index] if index < len(baselines) else None)
            if base:
                ax.plot(
                    [n for n, _ in base],
                    [rate for _, rate in base],
                    color=color,
                    linestyle=(0, (4, 2)),
                    marker="s",
                    markerfacecolor="white",
                    label=f"{label}: baseline",
                )
            if current:
                ax.plot(
                    [n for n, _ in current],
                    [rate for _, rate in current],
                    color=color,
                    marker="o",
                    label=f"{label}: this run" if base else label,
                )
            lengths.update(n for n, _ in current + base)
            rates += [rate for _, rate in current + base]
        if y_scale(rates) == "log":
            from matplotlib.ticker import FuncFormatter

            ax.set_yscale("log")
            # Plain numbers: the report's style turns mathtext off, so 10^k would show raw.
            ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        else:
            ax.set_ylim(bottom=0)
        lengths_axis(ax, sorted(lengths))
        finish_axes(ax, "Embedding speed vs haystack length", "tokens/s (model time)")
        outside_legend(fig, [ax])
        return png_bytes(fig)


def y_scale(rates: Sequence[float]) -> str:
    """``log`` where the fastest rate is over :data:`LOG_ABOVE` times the slowest, else ``linear``.

    A static model beside a transformer flattens the slower line to zero on a linear axis.
    """
    positive = [rate for rate in rates if rate > 0]
    if positive and max(positive) > LOG_ABOVE * min(positive):
        return "log"
    return "linear"


def has_speed(results: Sequence[NiahResults]) -> bool:
    """Whether any of the results measured a length's speed (the figure has a point)."""
    return any(measured(r.speed) for r in results)


def with_baselines(
    figures: list[tuple[Any, bytes]],
    results: Sequence[NiahResults],
    labels: Sequence[str],
    comparisons: Sequence[ReportComparison],
) -> list[tuple[Any, bytes]]:
    """``figures`` with the speed figure drawn again beside the comparisons' baselines."""
    by_label = {c.label: c.baseline_speed for c in comparisons}
    baselines = [by_label.get(label) for label in labels]
    if not any(map(measured, baselines)):
        return figures
    return [
        (spec, speed_figure(results, labels, baselines) if spec.id == SPEED_FIGURE_ID else png)
        for spec, png in figures
    ]
