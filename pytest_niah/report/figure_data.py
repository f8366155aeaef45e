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

__all__ = ["Grid", "panel_variants", "primary_variant"]

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
    return any(_finite(r.normalized) for r in results.rows("length", arm, scoring))


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


def _finite_range(values: Iterator[float] | Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if _finite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    return (low, high) if high > low else (low - 0.5, high + 0.5)


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
