"""The report figures of one measure against haystack length: a line per model x arm x scoring.

Normalized similarity, comparative ratio, AUC (with its band, the chance line and the
effective lengths), separation and the retrieval view. Each takes the results of one or more
models and their labels and returns deterministic PNG bytes; a colour per arm/scoring, a line
and marker style per model (:mod:`pytest_niah.report.house_style`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.report.house_style import CHANCE_COLOR, all_series, figure_style
from pytest_niah.report.plotting import (
    chance_axes,
    effective_length_line,
    finish_axes,
    interval_band,
    length_axis,
    metric_line,
    new_figure,
    outside_legend,
    png_bytes,
    retrieval_line,
    unit_axis,
)
from pytest_niah.results.niah_results import NiahResults


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
        chance_axes(
            ax,
            results,
            "Comparative ratio vs haystack length",
            "share of haystacks beating control",
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
        chance_axes(ax, results, "AUC vs haystack length", "AUC (positives vs negatives)")
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
