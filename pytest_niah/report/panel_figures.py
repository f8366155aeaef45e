"""The report figures split by needle category, order and position: a panel per model.

AUC per category and per needle order, normalized similarity by needle position and the
position x length heatmap. Each takes the results of one or more models and their labels and
returns deterministic PNG bytes; the per-model panels show one arm/scoring
(:func:`~pytest_niah.report.figure_data.panel_variants`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.report.figure_data import (
    all_lengths,
    finite_range,
    panel_variants,
    position_grid,
    position_profile,
    split_keys,
    split_rows,
)
from pytest_niah.report.heatmap import draw_heatmap
from pytest_niah.report.house_style import PALETTE, figure_style, model_style, sequential_colors
from pytest_niah.report.plotting import (
    chance_axes,
    finish_axes,
    new_figure,
    outside_legend,
    plot_line,
    png_bytes,
    position_axis,
)
from pytest_niah.results.niah_results import NiahResults


def category_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 5: AUC per category per length, one panel per model (see :func:`panel_variants`)."""
    categories = split_keys(results, "category")
    colors = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(categories)}
    with figure_style():
        fig, axes = new_figure(rows=len(results), row_height=3.4)
        panels = zip(axes, labels, results, panel_variants(results), strict=True)
        for ax, label, result, (arm, scoring) in panels:
            for category in categories:
                rows = split_rows(result, "category", category, arm, scoring)
                plot_line(ax, rows, "auc", category, colors[category], "-", "o")
            chance_axes(ax, [result], f"{label}: AUC by category ({arm}/{scoring})", "AUC")
        outside_legend(fig, axes, title="category")
        return png_bytes(fig)


def order_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 6: AUC per length for the default and the inverted needle order."""
    orders = split_keys(results, "order")
    colors = {o: PALETTE[i % len(PALETTE)] for i, o in enumerate(orders)}
    with figure_style():
        fig, (ax,) = new_figure()
        variants = panel_variants(results)
        for index, (label, result) in enumerate(zip(labels, results, strict=True)):
            arm, scoring = variants[index]
            linestyle, marker = model_style(index)
            for order in orders:
                rows = split_rows(result, "order", order, arm, scoring)
                name = f"{label} · {arm}/{scoring} · {order}"
                plot_line(ax, rows, "auc", name, colors[order], linestyle, marker)
        chance_axes(ax, results, "Default vs inverted needle order", "AUC")
        outside_legend(fig, [ax])
        return png_bytes(fig)


def position_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 7: normalized similarity vs needle position, a line per length, a panel per model."""
    lengths = all_lengths(results)
    colors = sequential_colors(len(lengths))
    with figure_style():
        fig, axes = new_figure(rows=len(results), row_height=3.4)
        panels = zip(axes, labels, results, panel_variants(results), strict=True)
        for ax, label, result, (arm, scoring) in panels:
            for length, color in zip(lengths, colors, strict=True):
                xs, ys = position_profile(result, arm, scoring, length)
                if xs:
                    ax.plot(xs, ys, color=color, marker="o", label=f"{length}")
            position_axis(ax, result)
            finish_axes(ax, f"{label}: position effects ({arm}/{scoring})", "normalized similarity")
        outside_legend(fig, axes, title="length")
        return png_bytes(fig)


def heatmap_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 8: mean normalized similarity by needle position (rows) and length (columns)."""
    variants = panel_variants(results)
    grids = [position_grid(r, *v) for r, v in zip(results, variants, strict=True)]
    low, high = finite_range(v for _, _, grid in grids for row in grid for v in row)
    with figure_style():
        positions = max(len(rows) for _, rows, _ in grids)
        fig, axes = new_figure(rows=len(results), row_height=1.4 + 0.32 * positions)
        for ax, label, grid, (arm, scoring) in zip(axes, labels, grids, variants, strict=True):
            draw_heatmap(fig, ax, grid, low, high)
            ax.set_title(f"{label}: normalized similarity ({arm}/{scoring})")
        return png_bytes(fig)
