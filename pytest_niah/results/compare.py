"""Compare a run with a baseline: paired deltas on the cells both measured, and their verdicts.

**Compatibility** (:mod:`pytest_niah.results.compatibility`): runs that measured different
things are refused, unless the user allows the difference by name.

**Pairing.** A cell is one needle haystack of the design: (needle group, arm, scoring, needle
order, length, position); a position index counts as the same cell only where both runs put
it at the same depth. Each question's negatives are the controls both runs list for it (by
id). Metrics of both runs are computed on exactly these cells and negatives, and the change's
interval comes from a paired bootstrap over needle groups.

**Coverage.** When the two models read different amounts of each haystack (windows of 254
and 126 tokens, say), a length whose haystacks extend past the smaller window, but whose
needles all sit outside the region between the two windows, cannot show the difference: its
comparison is inconclusive, whatever the interval says, and more positions would resolve it.
Likewise a length where fewer than half of the current run's cells are paired
(:mod:`pytest_niah.measure.gating` decides every gate).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.errors import CompareError
from pytest_niah.measure.comparison_verdicts import (
    compare_verdicts,
    delta_verdicts,
    slice_verdicts,
)
from pytest_niah.measure.meaningful import normalized_not_meaningful
from pytest_niah.measure.metric_tables import NegativeKey, negatives_by_key, question_scores
from pytest_niah.measure.records import CaseResult, NegativeScores
from pytest_niah.measure.verdicts import Verdict
from pytest_niah.results.compatibility import (
    NEVER_REFUSED,
    Difference,
    check_comparable,
    control_key,
    draw_of,
    no_common_draw,
    pairs_by_draw,
)
from pytest_niah.results.deltas import Delta as Delta  # the comparison's records
from pytest_niah.results.deltas import metric_deltas
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.windows_compared import coverage_gap
from pytest_niah.results.windows_compared import window_change as window_change  # tests

_Slice = tuple[str, str, int]  # (arm, scoring, length)
_CellKey = tuple[str, str, str, str, int, int, Fraction, int | None]


@dataclass(frozen=True)
class Comparison:
    """Every delta of a run against a baseline.

    Attributes:
        deltas: One per (arm, scoring, length, metric) with paired cells, in the current
            run's order, metrics in :data:`~pytest_niah.measure.metrics.METRICS` order.
        paired: Paired cells per (arm, scoring, length).
        unpaired_current: Cases of the current run that the baseline lacks.
        unpaired_baseline: Cases of the baseline that the current run lacks.
        allowed: The differences the user accepted.
        run_cells: The current run's cases per (arm, scoring, length), paired or not.
        windows: Where the two runs measured different windows, a phrase saying so (the
            comparison's headline shows it); else empty.
    """

    deltas: tuple[Delta, ...]
    paired: dict[_Slice, int]
    unpaired_current: int
    unpaired_baseline: int
    allowed: tuple[Difference, ...] = ()
    run_cells: dict[_Slice, int] = field(default_factory=dict)
    windows: str = ""

    @property
    def title_notes(self) -> str:
        """What the comparison's title says in parentheses, or "".

        The runs' windows, then each accepted difference that is never refused (the
        tokenizers of an upgrade).
        """
        notes = [self.windows] if self.windows else []
        notes += [NEVER_REFUSED[d.field] for d in self.allowed if d.field in NEVER_REFUSED]
        return "; ".join(notes)

    def delta(self, arm: str, length: int, metric: str, scoring: str = "whole") -> Delta | None:
        """The delta of one metric at one length, or ``None`` when not compared."""
        for d in self.deltas:
            if (d.arm, d.scoring, d.length, d.metric) == (arm, scoring, length, metric):
                return d
        return None

    def verdicts(
        self, allowances: Sequence[Allowance], where: _Slice | None = None
    ) -> list[tuple[Delta, Verdict]]:
        """Each gated delta (of one slice, or all) with its verdict (:func:`delta_verdicts`)."""
        return delta_verdicts(self.deltas, allowances, where)

    def slice_verdicts(self, allowances: Sequence[Allowance]) -> list[tuple[_Slice, Verdict]]:
        """Every slice's gate verdicts (:func:`~.comparison_verdicts.slice_verdicts`)."""
        return slice_verdicts(self, allowances)

    def gate_verdicts(self, allowances: Sequence[Allowance], where: _Slice) -> list[Verdict]:
        """One slice's gate verdicts (:func:`~.comparison_verdicts.compare_verdicts`)."""
        return compare_verdicts(self, allowances, where)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN becomes ``null``."""
        from dataclasses import asdict

        def clean(value: Any) -> Any:
            return None if isinstance(value, float) and math.isnan(value) else value

        return {
            "deltas": [{k: clean(v) for k, v in asdict(d).items()} for d in self.deltas],
            "paired": [
                {"arm": a, "scoring": s, "length": n, "cells": c}
                for (a, s, n), c in self.paired.items()
            ],
            "unpaired_current": self.unpaired_current,
            "unpaired_baseline": self.unpaired_baseline,
            "allowed": [asdict(d) for d in self.allowed],
            "windows": self.windows,
        }


def compare_results(
    current: NiahResults,
    baseline: NiahResults,
    *,
    n_resamples: int,
    seed: int,
    allow: Iterable[str] = (),
    source: str = "",
    flags: str = "--niah-",
) -> Comparison:
    """Compare ``current`` with ``baseline`` on the cells and negatives both measured.

    ``n_resamples`` is the paired bootstrap's size: pass the run's ``--niah-bootstrap``; 0
    gives no interval, so that every comparison gate is inconclusive (as every minimum gate
    of such a run is).

    ``flags`` starts the option names a refusal gives (``--`` for the offline CLI).

    Raises:
        CompareError: the runs are not comparable (see :func:`check_comparable`), or they
            share no cell at all.
    """
    allowed = check_comparable(current, baseline, allow=allow, source=source, flags=flags)
    by_draw = pairs_by_draw(current, baseline)
    cur_cells, base_cells = _cells(current, by_draw), _cells(baseline, by_draw)
    slices, run_cells = _paired_slices(cur_cells, base_cells)
    paired = {where: len(keys) for where, keys in slices.items()}
    if not paired:
        raise _no_common_cell(current, baseline, source, flags)
    cur_negs, base_negs = negatives_by_key(current.negatives), negatives_by_key(baseline.negatives)
    deltas = []
    for where, keys in slices.items():
        cur_cases = [cur_cells[k] for k in keys]
        base_cases = [base_cells[k] for k in keys]
        keep = _shared_negatives(
            where, cur_cases, (current, cur_negs), (baseline, base_negs), by_draw
        )
        cur_q = question_scores(cur_cases, cur_negs, negative_ids=keep[0])
        base_q = question_scores(base_cases, base_negs, negative_ids=keep[1])
        unresolved = coverage_gap(current, baseline, where, cur_cases, base_cases)
        cells = (len(keys), run_cells[where])
        found = metric_deltas(where, cells, cur_q, base_q, n_resamples, seed, unresolved)
        deltas.extend(
            _marked(found, _not_meaningful(current, where), _not_meaningful(baseline, where))
        )
    total = sum(paired.values())
    return Comparison(
        deltas=tuple(deltas),
        paired=paired,
        unpaired_current=len(cur_cells) - total,
        unpaired_baseline=len(base_cells) - total,
        allowed=tuple(allowed),
        run_cells=dict(run_cells),
        windows=window_change(current.model, baseline.model),
    )


def _paired_slices(
    cur_cells: dict[_CellKey, CaseResult], base_cells: dict[_CellKey, CaseResult]
) -> tuple[dict[_Slice, list[_CellKey]], dict[_Slice, int]]:
    """Per slice, the current run's cells the baseline shares, and all its cells (its order)."""
    slices: dict[_Slice, list[_CellKey]] = defaultdict(list)
    run_cells: dict[_Slice, int] = defaultdict(int)
    for key, case in cur_cells.items():
        run_cells[case.arm, case.scoring, case.length] += 1
        if key in base_cells:
            slices[case.arm, case.scoring, case.length].append(key)
    return slices, run_cells


def _no_common_cell(
    current: NiahResults, baseline: NiahResults, source: str, flags: str
) -> CompareError:
    why = no_common_draw(current, baseline)
    why = why or "no needle group, arm, order, length and position in common"
    return CompareError(
        f"{flags}compare: the baseline{f' ({source})' if source else ''} shares no cell "
        f"with this run ({why})",
        "compare with a run of the same needle groups and grid"
        + (" that drew one of the same seeds" if why.startswith("no haystack") else ""),
    )


def _cells(results: NiahResults, by_draw: bool) -> dict[_CellKey, CaseResult]:
    positions = results.config.positions
    return {
        (
            c.group_id,
            c.arm,
            c.scoring,
            c.order,
            c.length,
            # The position index draws the needle's name; the depth, where it sits. Index p
            # of a grid of another size sits elsewhere (or holds another name): another cell.
            c.position,
            Fraction(c.position, positions - 1) if positions > 1 else Fraction(0),
            # A draw of --niah-seeds pairs with the same draw (or a --niah-seed=N run): the
            # same haystacks.
            draw_of(results, c.seed) if by_draw else c.seed,
        ): c
        for c in results.cases
    }


def _shared_negatives(
    where: _Slice,
    cases: Sequence[CaseResult],
    current: tuple[NiahResults, dict[NegativeKey, NegativeScores]],
    baseline: tuple[NiahResults, dict[NegativeKey, NegativeScores]],
    by_draw: bool,
) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Per group, the negatives both runs measured: each run's own ids of them."""
    arm, scoring, length = where
    keep: tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]] = ({}, {})
    for group_id in {c.group_id for c in cases}:
        key = (arm, scoring, group_id, length)
        # With draws paired, "...-c0-s7" of a pooled run is "...-c0" of a --niah-seed=7 run.
        ids = [
            {(control_key(run, cid) if by_draw else cid): cid for cid in negs.control_ids}
            if (negs := negatives.get(key))
            else {}
            for run, negatives in (current, baseline)
        ]
        common = ids[0].keys() & ids[1].keys()
        for side, mine in zip(keep, ids, strict=True):
            side[group_id] = frozenset(mine[k] for k in common)
    return keep


def _not_meaningful(results: NiahResults, where: _Slice) -> str:
    """Why a run's own table shows its normalized similarity at ``where`` as ``n/m``, or ""."""
    arm, scoring, length = where
    try:
        row = results.row(arm, length, scoring)
    except KeyError:
        return ""
    if not math.isfinite(row.normalized):
        return ""
    return normalized_not_meaningful(row, results.interval(arm, length, "auc", scoring)) or ""


def _marked(deltas: list[Delta], current: str, baseline: str) -> list[Delta]:
    """The deltas, normalized similarity's carrying each run's ``n/m`` reason."""
    return [
        replace(d, current_not_meaningful=current, baseline_not_meaningful=baseline)
        if d.metric == "normalized"
        else d
        for d in deltas
    ]
