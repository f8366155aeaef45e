"""The report's figures: each one's id, title and caption, and the drawing of all of them.

Every figure takes the results of one or more models and their labels and returns
deterministic PNG bytes; with several models every figure draws all of them. The figures
against length are in :mod:`pytest_niah.report.length_figures`, those split by category,
order and position in :mod:`pytest_niah.report.panel_figures`, the speed figure in
:mod:`pytest_niah.report.speed_figure`; :data:`FIGURES` lists them in report order. The
comparison figure (:mod:`pytest_niah.report.comparison_figure`) and
:class:`~pytest_niah.errors.MatplotlibMissingError` are re-exported for the report's callers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_niah.errors import MatplotlibMissingError as MatplotlibMissingError  # re-exported
from pytest_niah.report.comparison_figure import COMPARISON_FIGURE as COMPARISON_FIGURE
from pytest_niah.report.comparison_figure import comparison_figure as comparison_figure
from pytest_niah.report.length_figures import (
    auc_figure,
    normalized_figure,
    ratio_figure,
    retrieval_figure,
    separation_figure,
)
from pytest_niah.report.panel_figures import (
    category_figure,
    heatmap_figure,
    order_figure,
    position_figure,
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
