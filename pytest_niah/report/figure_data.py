"""The data the report figures draw, taken from the results with no matplotlib.

Which arm/scoring each per-model panel shows (:func:`panel_variants`,
:func:`primary_variant`), the rows of one split, the lengths of all models, a model's
normalized similarity by needle position (as a profile and as a position x length
:data:`Grid`), and the finite range of a set of values.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from pytest_niah.measure.records import MetricRow
from pytest_niah.results.niah_results import NiahResults

__all__ = [
    "Grid",
    "all_lengths",
    "finite_range",
    "is_finite",
    "panel_variants",
    "position_grid",
    "position_profile",
    "primary_variant",
    "split_keys",
    "split_rows",
]

Grid = tuple[list[int], list[int], list[list[float]]]


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
    return any(is_finite(r.normalized) for r in results.rows("length", arm, scoring))


def split_rows(results: NiahResults, by: str, key: str, arm: str, scoring: str) -> list[MetricRow]:
    """The rows of ``arm``/``scoring`` in split ``by`` (category, order...) with ``key``."""
    return [r for r in results.rows(by, arm, scoring) if r.key == key]


def split_keys(results: Sequence[NiahResults], by: str) -> list[str]:
    """Every key of split ``by`` in any of ``results``, sorted."""
    return sorted({r.key for result in results for r in result.rows(by)})


def all_lengths(results: Sequence[NiahResults]) -> list[int]:
    """Every haystack length of any of ``results``, sorted."""
    return sorted({n for r in results for n in r.config.lengths})


def _position_index(key: str) -> int:
    return int(key.lstrip("p"))


def position_profile(
    results: NiahResults, arm: str, scoring: str, length: int
) -> tuple[list[int], list[float]]:
    """Needle positions and their normalized similarity at ``length``, by position."""
    rows = [r for r in results.rows("position", arm, scoring) if r.length == length]
    rows.sort(key=lambda r: _position_index(r.key))
    return [_position_index(r.key) for r in rows], [r.normalized for r in rows]


def position_grid(results: NiahResults, arm: str, scoring: str) -> Grid:
    """Normalized similarity by needle position (rows) and length (columns); NaN if none."""
    lengths = sorted(results.config.lengths)
    positions = list(range(results.config.positions))
    cell = {
        (_position_index(r.key), r.length): r.normalized
        for r in results.rows("position", arm, scoring)
    }
    values = [[cell.get((p, n), math.nan) for n in lengths] for p in positions]
    return lengths, positions, values


def finite_range(values: Iterator[float] | Sequence[float]) -> tuple[float, float]:
    """The lowest and highest finite value; 0..1 when none, one unit wide when all equal."""
    finite = [v for v in values if is_finite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    return (low, high) if high > low else (low - 0.5, high + 0.5)


def is_finite(value: float | None) -> bool:
    """Whether ``value`` is a number and neither NaN nor infinite."""
    return value is not None and math.isfinite(value)
