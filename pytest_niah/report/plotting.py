"""The drawing parts of the report figures: canvas, axes, lines and bands.

The figure scaffolding (an Agg-canvas figure, deterministic PNG bytes, titles, legends and
axes) and the helpers that draw one line or band on an axes, in the house style of
:mod:`pytest_niah.report.house_style` (the heatmap is :mod:`pytest_niah.report.heatmap`).
matplotlib is imported only inside functions and only its Agg canvas is used (no pyplot, no
window, no global backend change).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_niah.measure.chance import CHANCE
from pytest_niah.measure.records import MetricRow
from pytest_niah.report.figure_data import all_lengths, is_finite
from pytest_niah.report.house_style import CHANCE_COLOR, WIDTH, Series
from pytest_niah.results.niah_results import NiahResults

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "chance_axes",
    "chance_line",
    "effective_length_line",
    "finish_axes",
    "interval_band",
    "length_axis",
    "lengths_axis",
    "metric_line",
    "new_figure",
    "outside_legend",
    "plot_line",
    "png_bytes",
    "position_axis",
    "retrieval_line",
    "unit_axis",
]


# -- figure scaffolding -----------------------------------------------------------------------


def new_figure(
    rows: int = 1, cols: int = 1, *, row_height: float = 4.2
) -> tuple[Figure, list[Axes]]:
    """A figure on its own Agg canvas, :data:`WIDTH` wide, and its axes row by row."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH, row_height * rows), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False)
    return fig, [ax for line in grid for ax in line]


def png_bytes(fig: Figure) -> bytes:
    """``fig`` as PNG bytes that depend only on what is drawn (lone surrogates escaped)."""
    from matplotlib.text import Text

    # Labels are user text; one with a lone surrogate (from undecodable command-line bytes
    # or a "\\udcff" escape in a needle file) would stop the font code: show it escaped.
    for artist in fig.findobj(Text):
        text = artist.get_text()
        if any("\ud800" <= char <= "\udfff" for char in text):
            artist.set_text(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    buffer = io.BytesIO()
    # No Software entry: the bytes then depend only on what is drawn.
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def finish_axes(ax: Axes, title: str, ylabel: str) -> None:
    """Title and y label of ``ax``; a note in the middle when no line has a finite value."""
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    values = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    if not any(np.isfinite(v).any() for v in values):
        ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", color="grey")


def outside_legend(fig: Figure, axes: Sequence[Axes], title: str | None = None) -> None:
    """One legend below the plot for all ``axes``, one entry per distinct text."""
    # One legend for all panels, deduplicated by text, since panels share their colours.
    entries: dict[str, Any] = {}
    for ax in axes:
        handles, names = ax.get_legend_handles_labels()
        for handle, name in zip(handles, names, strict=True):
            entries.setdefault(name, handle)
    if entries:
        # Below the plot, so that every figure's axes keep the same width.
        columns = 2 if max(map(len, entries)) > 40 else 3
        fig.legend(
            list(entries.values()),
            list(entries),
            loc="outside lower center",
            ncols=min(columns, len(entries)),
            title=title,
        )


def length_axis(ax: Axes, results: Sequence[NiahResults]) -> None:
    """A log2 x axis with a tick at every haystack length of ``results``."""
    lengths_axis(ax, all_lengths(results))


def lengths_axis(ax: Axes, lengths: Sequence[int]) -> None:
    """A log2 x axis of haystack lengths with a tick at each of ``lengths``."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_xticks([], minor=True)
    # Room around the outer lengths, so that markers and effective-length lines stay clear.
    ax.margins(x=0.05)
    ax.set_xlabel("haystack length (tokens)")


def unit_axis(ax: Axes) -> None:
    """A y axis from 0 to 1, with a little room for markers at the ends."""
    ax.set_ylim(-0.03, 1.03)


def position_axis(ax: Axes, results: NiahResults) -> None:
    """An x axis of needle positions, 0 (start) to the last (end)."""
    last = results.config.positions - 1
    ax.set_xticks(range(last + 1))
    ax.set_xlabel(f"needle position (0 = start, {last} = end)")


def chance_line(ax: Axes) -> None:
    """The dashed line at 0.5: what a model without signal scores."""
    ax.axhline(
        CHANCE, color=CHANCE_COLOR, linestyle="--", linewidth=1.0, label=f"chance ({CHANCE})"
    )


def chance_axes(ax: Axes, results: Sequence[NiahResults], title: str, ylabel: str) -> None:
    """Axes of a share by length (AUC, ratio): chance line, log2 lengths, 0 to 1, titles."""
    chance_line(ax)
    length_axis(ax, results)
    unit_axis(ax)
    finish_axes(ax, title, ylabel)


# -- drawing helpers --------------------------------------------------------------------------


def metric_line(ax: Axes, series: Series, metric: str) -> None:
    """One line of ``metric`` by length for ``series``."""
    rows = series.results.rows("length", series.arm, series.scoring)
    plot_line(ax, rows, metric, series.name, series.color, series.linestyle, series.marker)


def plot_line(
    ax: Axes,
    rows: Sequence[MetricRow],
    metric: str,
    name: str,
    color: str,
    linestyle: Any,
    marker: str,
) -> None:
    """One line of ``metric`` over ``rows`` by length; "(no data)" when none is finite."""
    ordered = sorted(rows, key=lambda r: r.length)
    xs = [r.length for r in ordered]
    ys = [getattr(r, metric) for r in ordered]
    label = name if any(is_finite(y) for y in ys) else f"{name} (no data)"
    ax.plot(xs, ys, color=color, linestyle=linestyle, marker=marker, label=label)


def interval_band(ax: Axes, series: Series, metric: str) -> None:
    """The 95% interval of ``metric`` by length for ``series`` as a shaded band."""
    rows = [
        series.results.interval(series.arm, r.length, metric, series.scoring)
        for r in series.results.rows("length", series.arm, series.scoring)
    ]
    kept = sorted(
        (r for r in rows if r is not None and is_finite(r.low) and is_finite(r.high)),
        key=lambda r: r.length,
    )
    if kept:
        xs = [r.length for r in kept]
        ax.fill_between(
            xs,
            [r.low for r in kept],
            [r.high for r in kept],
            color=series.color,
            alpha=0.15,
            linewidth=0,
        )


def effective_length_line(ax: Axes, series: Series) -> None:
    """A dotted vertical line at the effective length of ``series``, if it has one."""
    from pytest_niah.report.terminal_tables import effective_window

    effective = series.results.effective_length(series.arm, series.scoring)
    if effective is not None and effective.length is not None:
        # Capped by the window, as the tables' phrase is: the model reads no further.
        window = effective_window(series.results, series.scoring)
        at = effective.length if window is None else min(effective.length, window)
        capped = "at most " if at < effective.length else ""
        name = f"{series.name}: effective length {capped}{at}"
        ax.axvline(at, color=series.color, linestyle=":", linewidth=1.5, label=name)


def retrieval_line(ax: Axes, series: Series, field: str) -> None:
    """One line of retrieval measure ``field`` by length for ``series``."""
    rows = sorted(
        (r for r in series.results.retrieval if (r.arm, r.scoring) == (series.arm, series.scoring)),
        key=lambda r: r.length,
    )
    if rows:
        ax.plot(
            [r.length for r in rows],
            [getattr(r, field) for r in rows],
            color=series.color,
            linestyle=series.linestyle,
            marker=series.marker,
            label=series.name,
        )
