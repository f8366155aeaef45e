"""The position x length heatmap of the report: one cell per needle position and length."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_niah.report.figure_data import Grid, is_finite
from pytest_niah.report.house_style import MISSING_COLOR

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def draw_heatmap(fig: Figure, ax: Axes, grid: Grid, low: float, high: float) -> None:
    """``grid`` as a position x length heatmap from ``low`` to ``high``, cells labelled."""
    import numpy as np
    from matplotlib import colormaps

    lengths, positions, values = grid
    data = np.ma.masked_invalid(np.array(values, dtype=float).reshape(len(positions), -1))
    cmap = colormaps["viridis"].with_extremes(bad=MISSING_COLOR)
    image = ax.imshow(data, cmap=cmap, vmin=low, vmax=high, aspect="auto")
    ax.grid(False)
    ax.set_xticks(range(len(lengths)), [str(n) for n in lengths])
    ax.set_yticks(range(len(positions)), [str(p) for p in positions])
    ax.set_xlabel("haystack length (tokens)")
    ax.set_ylabel("needle position (0 = start)")
    _annotate_cells(ax, values, low, high)
    fig.colorbar(image, ax=ax, label="normalized similarity")


def _annotate_cells(ax: Axes, values: list[list[float]], low: float, high: float) -> None:
    middle = (low + high) / 2
    for row, line in enumerate(values):
        for col, value in enumerate(line):
            text = f"{value:.2f}" if is_finite(value) else "n/a"
            # viridis is dark at the low end, so low cells get white text.
            color = "white" if is_finite(value) and value < middle else "black"
            ax.text(col, row, text, ha="center", va="center", fontsize=8, color=color)
