"""The history of saved runs as a plot: a panel per model label and metric, a line per length.

matplotlib is imported only when the plot is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_niah.report.escape import one_line
from pytest_niah.report.figures import MatplotlibMissingError
from pytest_niah.report.history_table import short_text
from pytest_niah.results.history_metrics import metric_label
from pytest_niah.results.history_series import DRIFT_MIN, Point, Series
from pytest_niah.results.run_history import History

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["history_figure"]

_TICK_CHARS = 14


def history_figure(
    history: History, metrics: Sequence[str], *, min_change: float = DRIFT_MIN
) -> bytes:
    """The history plot as PNG bytes: one panel per model label and metric, stacked.

    x is the run order (ticks name each run and its commit), one line per length with its
    95% interval as error bars, and a label above each run whose model identity differs
    from the run before (the first run's included). A panel's title names the lengths
    that drifted (see :class:`~pytest_niah.results.history_series.Drift`).

    Raises:
        MatplotlibMissingError: matplotlib is not installed; the message names the extra.
    """
    _require_matplotlib()
    from pytest_niah.report.house_style import MARKERS, PALETTE, figure_style
    from pytest_niah.report.plotting import new_figure, outside_legend, png_bytes

    panels = [(s, m) for s in history.series for m in metrics]
    lengths = sorted({n for s in history.series for n in s.lengths})
    colors = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(lengths)}
    markers = {n: MARKERS[i % len(MARKERS)] for i, n in enumerate(lengths)}
    with figure_style():
        fig, axes = new_figure(len(panels) or 1, row_height=3.8)
        for ax, (series, metric) in zip(axes, panels, strict=False):
            # Lengths sit side by side around each run, so their error bars do not overlap.
            spread = 0.25 / max(1, len(series.lengths) - 1)
            for j, length in enumerate(series.lengths):
                offset = (j - (len(series.lengths) - 1) / 2) * spread
                _length_line(
                    ax,
                    series.points(metric, length),
                    offset,
                    f"{length} tokens",
                    colors[length],
                    markers[length],
                )
            if metric in ("auc", "comparative_ratio"):
                _chance_line(ax)
            _identity_marks(ax, series)
            _runs_axis(ax, series)
            drifted = [d.length for d in series.drift(metric, min_change=min_change) if d.flagged]
            drift = f" · drift at {', '.join(map(str, drifted))}" if drifted else ""
            ax.set_title(
                f"{one_line(series.label)} · {series.arm}/{series.scoring} · "
                f"{metric_label(metric)}{drift}"
            )
            ax.set_ylabel(metric_label(metric))
        if not panels:
            axes[0].text(0.5, 0.5, "no saved runs", transform=axes[0].transAxes, ha="center")
        outside_legend(fig, axes, title="haystack length")
        return png_bytes(fig)


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MatplotlibMissingError(
            "the history plot needs matplotlib, which is not installed"
        ) from exc


def _chance_line(ax: Axes) -> None:
    """A metric whose chance level is 0.5, on a 0..1 scale."""
    from pytest_niah.report.house_style import CHANCE_COLOR

    ax.axhline(0.5, color=CHANCE_COLOR, linestyle="--", linewidth=1.0, label="chance (0.5)")
    ax.set_ylim(-0.03, 1.1)


def _runs_axis(ax: Axes, series: Series) -> None:
    """x: the saved runs, oldest first, each named by its name and commit."""
    count = len(series.runs)
    # Many runs: slanted names stay readable.
    slant: dict[str, Any] = (
        {"rotation": 45, "ha": "right", "rotation_mode": "anchor"} if count > 8 else {}
    )
    ax.set_xticks(
        range(count),
        [f"{short_text(r.name, _TICK_CHARS)}\n{r.commit_text}" for r in series.runs],
        **slant,
    )
    ax.set_xlim(-0.6, count - 0.4)
    ax.set_xlabel("saved run, oldest first (name, commit)")


def _length_line(
    ax: Axes, points: Sequence[Point | None], offset: float, name: str, color: str, marker: str
) -> None:
    xs = [i + offset for i in range(len(points))]
    ys = [math.nan if p is None else p.value for p in points]
    low = [p.value - p.low if p is not None and p.has_interval else 0.0 for p in points]
    high = [p.high - p.value if p is not None and p.has_interval else 0.0 for p in points]
    ax.errorbar(
        xs,
        ys,
        yerr=[
            [max(v, 0.0) if math.isfinite(v) else 0.0 for v in low],
            [max(v, 0.0) if math.isfinite(v) else 0.0 for v in high],
        ],
        color=color,
        marker=marker,
        capsize=3,
        elinewidth=1.0,
        label=name,
    )


def _identity_marks(ax: Axes, series: Series) -> None:
    for i in series.identity_changes():
        if i > 0:
            ax.axvline(i - 0.5, color="#999999", linestyle=":", linewidth=1.0)
        ax.annotate(
            f"model {series.runs[i].identity}",
            xy=(i, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(0, -2),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=8,
            color="#444444",
        )
