"""Report figures: one function per figure, each returning deterministic PNG bytes.

Every function takes the results of one or more models and their labels. With several
models every figure draws all of them: a colour per arm/scoring (or per category, order,
length), a line and marker style per model. matplotlib is imported only inside functions
and only its Agg canvas is used (no pyplot, no window, no global backend change).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.errors import MatplotlibMissingError as MatplotlibMissingError  # re-exported
from pytest_niah.measure.records import MetricRow
from pytest_niah.results.niah_results import NiahResults

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from pytest_niah.report.comparison import ReportComparison

Render = Callable[[Sequence[NiahResults], Sequence[str]], bytes]
# lengths (columns), positions (rows), values[position][length]
Grid = tuple[list[int], list[int], list[list[float]]]

# tab10, spelled out so that colours need no matplotlib import at module level.
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
# Dashed grey is the chance line and dotted the effective length, so models avoid both.
LINESTYLES: tuple[Any, ...] = ("-", (0, (6, 2)), "-.", (0, (6, 2, 1, 2, 1, 2)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
CHANCE_COLOR = "#555555"
MISSING_COLOR = "#dddddd"
WIDTH = 10.0
STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "svg.hashsalt": "pytest-niah",
    # Labels are user text: a "$" in one must show as "$", never start mathtext (which
    # fails on text such as "$\\x$" and would stop the whole report).
    "text.parse_math": False,
}


@dataclass(frozen=True)
class Series:
    """One line: a model's arm and scoring, with its colour and model style."""

    label: str
    results: NiahResults
    arm: str
    scoring: str
    color: str
    linestyle: Any
    marker: str

    @property
    def name(self) -> str:
        """Legend text: model label, arm and scoring."""
        return f"{self.label} · {self.arm}/{self.scoring}"


@dataclass(frozen=True)
class FigureSpec:
    """A report figure: its HTML id, title, caption and the function that draws it."""

    id: str
    title: str
    caption: str
    render: Render
    needs_retrieval: bool = False

    def available(self, results: Sequence[NiahResults]) -> bool:
        """Whether the results hold the data this figure draws."""
        return not self.needs_retrieval or any(r.retrieval for r in results)


# -- public figure functions ------------------------------------------------------------------


def normalized_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 1: normalized similarity vs length, one line per model x arm x scoring."""
    with _style():
        fig, (ax,) = _figure()
        for series in _all_series(results, labels):
            _metric_line(ax, series, "normalized")
        _length_axis(ax, results)
        _finish(ax, "Normalized similarity vs haystack length", "cos(q, h) / cos(q, n)")
        _outside_legend(fig, [ax])
        return _png(fig)


def ratio_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 2: comparative ratio vs length, with the 0.5 chance line."""
    with _style():
        fig, (ax,) = _figure()
        for series in _all_series(results, labels):
            _metric_line(ax, series, "comparative_ratio")
        _chance_line(ax)
        _length_axis(ax, results)
        _unit_axis(ax)
        _finish(ax, "Comparative ratio vs haystack length", "share of haystacks beating control")
        _outside_legend(fig, [ax])
        return _png(fig)


def auc_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 3: AUC vs length with its 95% band, the chance line and effective lengths."""
    with _style():
        fig, (ax,) = _figure()
        for series in _all_series(results, labels):
            _metric_line(ax, series, "auc")
            _interval_band(ax, series, "auc")
            _effective_length_line(ax, series)
        _chance_line(ax)
        _length_axis(ax, results)
        _unit_axis(ax)
        _finish(ax, "AUC vs haystack length", "AUC (positives vs negatives)")
        _outside_legend(fig, [ax])
        return _png(fig)


def separation_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 4: separation (mean positive minus mean negative score) vs length."""
    with _style():
        fig, (ax,) = _figure()
        for series in _all_series(results, labels):
            _metric_line(ax, series, "separation")
        ax.axhline(0.0, color=CHANCE_COLOR, linewidth=0.8)
        _length_axis(ax, results)
        _finish(ax, "Separation vs haystack length", "mean positive − mean negative")
        _outside_legend(fig, [ax])
        return _png(fig)


def category_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 5: AUC per category per length, one panel per model (see :func:`panel_variants`)."""
    categories = _keys(results, "category")
    colors = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(categories)}
    with _style():
        fig, axes = _figure(rows=len(results), row_height=3.4)
        panels = zip(axes, labels, results, panel_variants(results), strict=True)
        for ax, label, result, (arm, scoring) in panels:
            for category in categories:
                rows = _split_rows(result, "category", category, arm, scoring)
                _line(ax, rows, "auc", category, colors[category], "-", "o")
            _chance_line(ax)
            _length_axis(ax, [result])
            _unit_axis(ax)
            _finish(ax, f"{label}: AUC by category ({arm}/{scoring})", "AUC")
        _outside_legend(fig, axes, title="category")
        return _png(fig)


def order_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 6: AUC per length for the default and the inverted needle order."""
    orders = _keys(results, "order")
    colors = {o: PALETTE[i % len(PALETTE)] for i, o in enumerate(orders)}
    with _style():
        fig, (ax,) = _figure()
        variants = panel_variants(results)
        for index, (label, result) in enumerate(zip(labels, results, strict=True)):
            arm, scoring = variants[index]
            linestyle, marker = _model_style(index)
            for order in orders:
                rows = _split_rows(result, "order", order, arm, scoring)
                name = f"{label} · {arm}/{scoring} · {order}"
                _line(ax, rows, "auc", name, colors[order], linestyle, marker)
        _chance_line(ax)
        _length_axis(ax, results)
        _unit_axis(ax)
        _finish(ax, "Default vs inverted needle order", "AUC")
        _outside_legend(fig, [ax])
        return _png(fig)


def position_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 7: normalized similarity vs needle position, a line per length, a panel per model."""
    lengths = _all_lengths(results)
    colors = _sequential_colors(len(lengths))
    with _style():
        fig, axes = _figure(rows=len(results), row_height=3.4)
        panels = zip(axes, labels, results, panel_variants(results), strict=True)
        for ax, label, result, (arm, scoring) in panels:
            for length, color in zip(lengths, colors, strict=True):
                xs, ys = _position_profile(result, arm, scoring, length)
                if xs:
                    ax.plot(xs, ys, color=color, marker="o", label=f"{length}")
            _position_axis(ax, result)
            _finish(ax, f"{label}: position effects ({arm}/{scoring})", "normalized similarity")
        _outside_legend(fig, axes, title="length")
        return _png(fig)


def heatmap_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 8: mean normalized similarity by needle position (rows) and length (columns)."""
    variants = panel_variants(results)
    grids = [_position_grid(r, *v) for r, v in zip(results, variants, strict=True)]
    low, high = _finite_range(v for _, _, grid in grids for row in grid for v in row)
    with _style():
        positions = max(len(rows) for _, rows, _ in grids)
        fig, axes = _figure(rows=len(results), row_height=1.4 + 0.32 * positions)
        for ax, label, grid, (arm, scoring) in zip(axes, labels, grids, variants, strict=True):
            _heatmap(fig, ax, grid, low, high)
            ax.set_title(f"{label}: normalized similarity ({arm}/{scoring})")
        return _png(fig)


def retrieval_figure(results: Sequence[NiahResults], labels: Sequence[str]) -> bytes:
    """Figure 9: retrieval view, acc@1 and MRR vs length for every model x arm x scoring."""
    with _style():
        fig, axes = _figure(cols=2, row_height=4.0)
        for ax, field, name in zip(axes, ("acc_at_1", "mrr"), ("acc@1", "MRR"), strict=True):
            for series in _all_series(results, labels):
                _retrieval_line(ax, series, field)
            _length_axis(ax, results)
            _unit_axis(ax)
            _finish(ax, f"Retrieval: {name} vs haystack length", name)
        _outside_legend(fig, axes)
        return _png(fig)


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
)


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
    with _style():
        fig, axes = _figure(rows=2, cols=2, row_height=3.8)
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
                if not deltas:
                    continue
                color = PALETTE[number % len(PALETTE)]
                name = f"{comparison.label} · {arm}/{scoring}"
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
                ax.plot(
                    xs,
                    [d.current for d in deltas],
                    color=color,
                    marker="o",
                    label=f"{name}: this run",
                )
                band = [
                    d for d in deltas if _finite(d.baseline) and _finite(d.low) and _finite(d.high)
                ]
                if band:
                    ax.fill_between(
                        [d.length for d in band],
                        [d.baseline + d.low for d in band],
                        [d.baseline + d.high for d in band],
                        color=color,
                        alpha=0.15,
                        linewidth=0,
                    )
            if metric in ("comparative_ratio", "auc"):
                _chance_line(ax)
                _unit_axis(ax)
            _lengths_axis(ax, lengths)
            _finish(ax, METRIC_LABELS.get(metric, metric), METRIC_LABELS.get(metric, metric))
        _outside_legend(fig, axes)
        return _png(fig)


def render_figures(
    results: Sequence[NiahResults], labels: Sequence[str]
) -> list[tuple[FigureSpec, bytes]]:
    """Draw every figure the results have data for, in report order."""
    return [(spec, spec.render(results, labels)) for spec in FIGURES if spec.available(results)]


def panel_variants(results: Sequence[NiahResults]) -> list[tuple[str, str]]:
    """The arm/scoring each per-model panel shows (category, order, position, heatmap).

    Models that share variants all show the same one, so that their panels compare: the
    first shared variant with a finite normalized similarity in any model, else the first
    shared one. Models that share none each show their own :func:`primary_variant`.
    """
    common = [v for v in results[0].variants if all(v in r.variants for r in results[1:])]
    if not common:
        return [primary_variant(r) for r in results]
    finite = [v for v in common if any(_has_normalized(r, *v) for r in results)]
    return [(finite or common)[0]] * len(results)


def primary_variant(results: NiahResults) -> tuple[str, str]:
    """The first arm/scoring of one model with a finite normalized similarity, else its first.

    A lexical model gives cos(q, n) = 0 for one-hop needles, so its normalized similarity is
    all NaN; falling through to the next variant keeps its panels from being empty.
    """
    for arm, scoring in results.variants:
        if _has_normalized(results, arm, scoring):
            return arm, scoring
    return results.variants[0]


def _has_normalized(results: NiahResults, arm: str, scoring: str) -> bool:
    return any(_finite(r.normalized) for r in results.rows("length", arm, scoring))


# -- figure scaffolding -----------------------------------------------------------------------


@contextmanager
def _style() -> Iterator[None]:
    matplotlib = _matplotlib()
    with matplotlib.rc_context(STYLE):
        yield


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise MatplotlibMissingError(
            "the report's figures need matplotlib, which is not installed",
            "pip install 'pytest-niah[report]' (or pip install 'matplotlib>=3.8')",
        ) from exc
    return matplotlib


def _figure(rows: int = 1, cols: int = 1, *, row_height: float = 4.2) -> tuple[Figure, list[Axes]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH, row_height * rows), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False)
    return fig, [ax for line in grid for ax in line]


def _png(fig: Figure) -> bytes:
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


def _finish(ax: Axes, title: str, ylabel: str) -> None:
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    values = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    if not any(np.isfinite(v).any() for v in values):
        ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", color="grey")


def _outside_legend(fig: Figure, axes: Sequence[Axes], title: str | None = None) -> None:
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


def _length_axis(ax: Axes, results: Sequence[NiahResults]) -> None:
    _lengths_axis(ax, _all_lengths(results))


def _lengths_axis(ax: Axes, lengths: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_xticks([], minor=True)
    # Room around the outer lengths, so that markers and effective-length lines stay clear.
    ax.margins(x=0.05)
    ax.set_xlabel("haystack length (tokens)")


def _unit_axis(ax: Axes) -> None:
    ax.set_ylim(-0.03, 1.03)


def _position_axis(ax: Axes, results: NiahResults) -> None:
    last = results.config.positions - 1
    ax.set_xticks(range(last + 1))
    ax.set_xlabel(f"needle position (0 = start, {last} = end)")


def _chance_line(ax: Axes) -> None:
    ax.axhline(0.5, color=CHANCE_COLOR, linestyle="--", linewidth=1.0, label="chance (0.5)")


# -- drawing helpers --------------------------------------------------------------------------


def _metric_line(ax: Axes, series: Series, metric: str) -> None:
    rows = series.results.rows("length", series.arm, series.scoring)
    _line(ax, rows, metric, series.name, series.color, series.linestyle, series.marker)


def _line(
    ax: Axes,
    rows: Sequence[MetricRow],
    metric: str,
    name: str,
    color: str,
    linestyle: Any,
    marker: str,
) -> None:
    ordered = sorted(rows, key=lambda r: r.length)
    xs = [r.length for r in ordered]
    ys = [getattr(r, metric) for r in ordered]
    label = name if any(_finite(y) for y in ys) else f"{name} (no data)"
    ax.plot(xs, ys, color=color, linestyle=linestyle, marker=marker, label=label)


def _interval_band(ax: Axes, series: Series, metric: str) -> None:
    rows = [
        series.results.interval(series.arm, r.length, metric, series.scoring)
        for r in series.results.rows("length", series.arm, series.scoring)
    ]
    kept = sorted(
        (r for r in rows if r is not None and _finite(r.low) and _finite(r.high)),
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


def _effective_length_line(ax: Axes, series: Series) -> None:
    effective = series.results.effective_length(series.arm, series.scoring)
    if effective is not None and effective.length is not None:
        name = f"{series.name}: effective length {effective.length}"
        ax.axvline(effective.length, color=series.color, linestyle=":", linewidth=1.5, label=name)


def _retrieval_line(ax: Axes, series: Series, field: str) -> None:
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


def _heatmap(fig: Figure, ax: Axes, grid: Grid, low: float, high: float) -> None:
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
            text = f"{value:.2f}" if _finite(value) else "n/a"
            # viridis is dark at the low end, so low cells get white text.
            color = "white" if _finite(value) and value < middle else "black"
            ax.text(col, row, text, ha="center", va="center", fontsize=8, color=color)


# -- data helpers -----------------------------------------------------------------------------


def _all_series(results: Sequence[NiahResults], labels: Sequence[str]) -> list[Series]:
    variants = list(dict.fromkeys(v for r in results for v in r.variants))
    series = []
    for index, (label, result) in enumerate(zip(labels, results, strict=True)):
        linestyle, marker = _model_style(index)
        for arm, scoring in result.variants:
            color = PALETTE[variants.index((arm, scoring)) % len(PALETTE)]
            series.append(Series(label, result, arm, scoring, color, linestyle, marker))
    return series


def _model_style(index: int) -> tuple[Any, str]:
    return LINESTYLES[index % len(LINESTYLES)], MARKERS[index % len(MARKERS)]


def _split_rows(results: NiahResults, by: str, key: str, arm: str, scoring: str) -> list[MetricRow]:
    return [r for r in results.rows(by, arm, scoring) if r.key == key]


def _keys(results: Sequence[NiahResults], by: str) -> list[str]:
    return sorted({r.key for result in results for r in result.rows(by)})


def _all_lengths(results: Sequence[NiahResults]) -> list[int]:
    return sorted({n for r in results for n in r.config.lengths})


def _position_index(key: str) -> int:
    return int(key.lstrip("p"))


def _position_profile(
    results: NiahResults, arm: str, scoring: str, length: int
) -> tuple[list[int], list[float]]:
    rows = [r for r in results.rows("position", arm, scoring) if r.length == length]
    rows.sort(key=lambda r: _position_index(r.key))
    return [_position_index(r.key) for r in rows], [r.normalized for r in rows]


def _position_grid(results: NiahResults, arm: str, scoring: str) -> Grid:
    lengths = sorted(results.config.lengths)
    positions = list(range(results.config.positions))
    cell = {
        (_position_index(r.key), r.length): r.normalized
        for r in results.rows("position", arm, scoring)
    }
    values = [[cell.get((p, n), math.nan) for n in lengths] for p in positions]
    return lengths, positions, values


def _sequential_colors(count: int) -> list[str]:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["viridis"]
    # Stop short of viridis' pale yellow end, which is hard to see on white.
    return [to_hex(cmap(0.85 * i / max(count - 1, 1))) for i in range(count)]


def _finite_range(values: Iterator[float] | Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if _finite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    return (low, high) if high > low else (low - 0.5, high + 0.5)


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
