"""The report figures' house style: colours, line styles and markers, and the style context.

The house style (:data:`PALETTE`, :data:`LINESTYLES`, :data:`MARKERS`, :data:`STYLE`), a
:class:`Series` per model x arm x scoring with its colour and model style, and
:func:`figure_style`, the context every figure is drawn in. matplotlib is imported only
inside functions; the drawing itself is :mod:`pytest_niah.report.plotting`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pytest_niah.errors import MatplotlibMissingError
from pytest_niah.results.niah_results import NiahResults

__all__ = [
    "CHANCE_COLOR",
    "LINESTYLES",
    "MARKERS",
    "MISSING_COLOR",
    "PALETTE",
    "STYLE",
    "WIDTH",
    "Series",
    "all_series",
    "figure_style",
    "model_style",
    "sequential_colors",
]

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


# -- the style context ------------------------------------------------------------------------


@contextmanager
def figure_style() -> Iterator[None]:
    """Draw in the house style (:data:`STYLE`) inside this context.

    Raises:
        MatplotlibMissingError: matplotlib is not installed; the message names the extra.
    """
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


# -- series and colours -----------------------------------------------------------------------


def all_series(results: Sequence[NiahResults], labels: Sequence[str]) -> list[Series]:
    """A :class:`Series` per model and arm/scoring: a colour per variant, a style per model."""
    variants = list(dict.fromkeys(v for r in results for v in r.variants))
    series = []
    for index, (label, result) in enumerate(zip(labels, results, strict=True)):
        linestyle, marker = model_style(index)
        for arm, scoring in result.variants:
            color = PALETTE[variants.index((arm, scoring)) % len(PALETTE)]
            series.append(Series(label, result, arm, scoring, color, linestyle, marker))
    return series


def model_style(index: int) -> tuple[Any, str]:
    """The line style and marker of the ``index``-th model."""
    return LINESTYLES[index % len(LINESTYLES)], MARKERS[index % len(MARKERS)]


def sequential_colors(count: int) -> list[str]:
    """``count`` colours along viridis, short of its pale yellow end."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["viridis"]
    # Stop short of viridis' pale yellow end, which is hard to see on white.
    return [to_hex(cmap(0.85 * i / max(count - 1, 1))) for i in range(count)]
