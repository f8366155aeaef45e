"""Report figures: one function per figure, each returning deterministic PNG bytes.

Every function takes the results of one or more models and their labels. With several
models every figure draws all of them: a colour per arm/scoring (or per category, order,
length), a line and marker style per model. matplotlib is imported only inside functions
and only its Agg canvas is used (no pyplot, no window, no global backend change).

The drawing helpers and the house style are in :mod:`pytest_niah.report.plotting`, the
data the figures draw in :mod:`pytest_niah.report.figure_data`, the comparison figure in
:mod:`pytest_niah.report.comparison_figure`; the names other modules take from here (the
style constants, :func:`panel_variants`, :func:`primary_variant`, :func:`comparison_figure`)
are re-exported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_niah.errors import MatplotlibMissingError as MatplotlibMissingError  # re-exported
from pytest_niah.report.comparison_figure import COMPARISON_FIGURE as COMPARISON_FIGURE
from pytest_niah.report.comparison_figure import comparison_figure as comparison_figure
from pytest_niah.report.figure_data import Grid as Grid
from pytest_niah.report.figure_data import (
    all_lengths,
    finite_range,
    position_grid,
    position_profile,
    split_keys,
    split_rows,
)
from pytest_niah.report.figure_data import panel_variants as panel_variants
from pytest_niah.report.figure_data import primary_variant as primary_variant
from pytest_niah.report.heatmap import draw_heatmap
from pytest_niah.report.plotting import CHANCE_COLOR as CHANCE_COLOR
from pytest_niah.report.plotting import LINESTYLES as LINESTYLES
from pytest_niah.report.plotting import MARKERS as MARKERS
from pytest_niah.report.plotting import MISSING_COLOR as MISSING_COLOR
from pytest_niah.report.plotting import PALETTE as PALETTE
from pytest_niah.report.plotting import STYLE as STYLE
from pytest_niah.report.plotting import WIDTH as WIDTH
from pytest_niah.report.plotting import Series as Series
from pytest_niah.report.plotting import (
    all_series,
    chance_line,
    effective_length_line,
    figure_style,
    finish_axes,
    interval_band,
    length_axis,
    metric_line,
    model_style,
    new_figure,
    outside_legend,
    plot_line,
    png_bytes,
    position_axis,
    retrieval_line,
    sequential_colors,
    unit_axis,
)
from pytest_niah.report.speed_figure import SPEED_FIGURE_ID, has_speed, speed_figure
from pytest_niah.results.niah_results import NiahResults

Render = Callable[[Sequence[NiahResults], Sequence[str]], bytes]


@dataclass(frozen=True)
class FigureSpec:
    """A report figure: its HTML id, title, caption and the function that draws it."""

    id: str
    title: str
    caption: str
    render: Render
    needs_retrieval: bool = False
    needs_speed: bool = False

    def available(self, results: Sequence[NiahResults]) -> bool:
        """Whether the results hold the data this figure draws."""
        if self.needs_speed and not has_speed(results):
            return False
        return not self.needs_retrieval or any(r.retrieval for r in results)


# -- public figure functions ------------------------------------------------------------------


def normalized_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 1: normalized similarity vs length, one line per model x arm x scoring."""
    with figure_style():
        fig, (ax,) = new_figure()
        for series in all_series(results, labels):
            metric_line(ax, series, "normalized")
        length_axis(ax, results)
        finish_axes(ax, "Normalized similarity vs haystack length", "cos(q, h) / cos(q, n)")
        outside_legend(fig, [ax])
        return png_bytes(fig)


def ratio_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 2: comparative ratio vs length, with the 0.5 chance line."""
    with figure_style():
        fig, (ax,) = new_figure()
        for series in all_series(results, labels):
            metric_line(ax, series, "comparative_ratio")
        chance_line(ax)
        length_axis(ax, results)
        unit_axis(ax)
        finish_axes(
            ax, "Comparative ratio vs haystack length", "share of haystacks beating control"
        )
        outside_legend(fig, [ax])
        return png_bytes(fig)


def auc_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 3: AUC vs length with its 95% band, the chance line and effective lengths."""
    with figure_style():
        fig, (ax,) = new_figure()
        for series in all_series(results, labels):
            metric_line(ax, series, "auc")
            interval_band(ax, series, "auc")
            effective_length_line(ax, series)
        chance_line(ax)
        length_axis(ax, results)
        unit_axis(ax)
        finish_axes(ax, "AUC vs haystack length", "AUC (positives vs negatives)")
        outside_legend(fig, [ax])
        return png_bytes(fig)


def separation_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 4: separation (mean positive minus mean negative score) vs length."""
    with figure_style():
        fig, (ax,) = new_figure()
        for series in all_series(results, labels):
            metric_line(ax, series, "separation")
        ax.axhline(0.0, color=CHANCE_COLOR, linewidth=0.8)
        length_axis(ax, results)
        finish_axes(ax, "Separation vs haystack length", "mean positive − mean negative")
        outside_legend(fig, [ax])
        return png_bytes(fig)


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
            chance_line(ax)
            length_axis(ax, [result])
            unit_axis(ax)
            finish_axes(ax, f"{label}: AUC by category ({arm}/{scoring})", "AUC")
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
        chance_line(ax)
        length_axis(ax, results)
        unit_axis(ax)
        finish_axes(ax, "Default vs inverted needle order", "AUC")
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


def retrieval_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 9: retrieval view, acc@1 and MRR vs length for every model x arm x scoring."""
    with figure_style():
        fig, axes = new_figure(cols=2, row_height=4.0)
        for ax, field, name in zip(axes, ("acc_at_1", "mrr"), ("acc@1", "MRR"), strict=True):
            for series in all_series(results, labels):
                retrieval_line(ax, series, field)
            length_axis(ax, results)
            unit_axis(ax)
            finish_axes(ax, f"Retrieval: {name} vs haystack length", name)
        outside_legend(fig, axes)
        return png_bytes(fig)


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "fig-normalized",
        "Normalized similarity",
        "cos(question, haystack) / cos(question, needle alone) per length: how much of the "
        "needle's own similarity survives in the haystack.",
        normalized_figure,
    ),
    FigureSpec(
        "fig-ratio",
        "Comparative ratio",
        "Share of needle haystacks that outscore their own no-needle control; dashed: chance.",
        ratio_figure,
    ),
    FigureSpec(
        "fig-auc",
        "AUC",
        "AUC of positives vs negatives per length; band: 95% bootstrap interval over needle "
        "groups; dashed: chance; dotted verticals: effective lengths.",
        auc_figure,
    ),
    FigureSpec(
        "fig-separation",
        "Separation",
        "Mean score of haystacks holding the answer minus mean score of those without it.",
        separation_figure,
    ),
    FigureSpec(
        "fig-category",
        "By category",
        "AUC per needle category and length, one panel per model. The per-model panels show "
        "one arm/scoring: the first (shared by all models) with a finite normalized similarity.",
        category_figure,
    ),
    FigureSpec(
        "fig-order",
        "Needle order",
        "AUC per length for the default and the inverted wording of the needle.",
        order_figure,
    ),
    FigureSpec(
        "fig-position",
        "Position effects",
        "Normalized similarity by needle position (0 = start of the haystack), a line per length.",
        position_figure,
    ),
    FigureSpec(
        "fig-heatmap",
        "Position x length",
        "Mean normalized similarity per needle position (rows) and length (columns), one colour "
        "scale for all models; grey n/a: undefined because cos(question, needle) <= 0.",
        heatmap_figure,
    ),
    FigureSpec(
        "fig-retrieval",
        "Retrieval",
        "Each needle haystack ranked among all haystacks of its length: accuracy at 1 and mean "
        "reciprocal rank.",
        retrieval_figure,
        needs_retrieval=True,
    ),
    FigureSpec(
        SPEED_FIGURE_ID,
        "Embedding speed",
        "Tokens embedded per second of model time, per length (cached inputs left out); "
        "dashed, open markers: the comparison baseline. A measurement, never a gate.",
        speed_figure,
        needs_speed=True,
    ),
)


def render_figures(
    results: Sequence[NiahResults], labels: Sequence[str]
) -> list[tuple[FigureSpec, bytes]]:
    """Draw every figure the results have data for, in report order."""
    return [(spec, spec.render(results, labels)) for spec in FIGURES if spec.available(results)]
