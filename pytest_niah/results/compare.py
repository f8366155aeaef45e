"""Compare a run with a baseline run: paired per-length deltas and regression expressions.

Two runs are compared on the cells they share. A cell is one needle haystack of the design:
(needle group, arm, scoring, needle order, length, position); a position index counts as the
same cell only where both runs put it at the same depth (the same ``--niah-positions``, or
position 0), since index ``p`` of a 4-position grid and of a 3-position grid hold different
needles at different depths. Cells of one run only are counted, not compared.

Every metric of :data:`pytest_niah.stats.METRICS` is higher-is-better, so a regression is a
drop, ``baseline - current``, larger than a ``--niah-compare-fail`` threshold such as
``auc:0.02`` (absolute) or ``ratio:5%`` (relative to the baseline's value).

numpy and :mod:`pytest_niah.stats` are imported only when comparing, so parsing expressions
stays cheap for the plugin.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pytest_niah.config.parsers import Allowance
from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.display import fmt
from pytest_niah.measure.records import CaseResult
from pytest_niah.results.niah_results import NiahResults, _encode

if TYPE_CHECKING:  # pragma: no cover
    from pytest_niah.measure.stats import QuestionScores

_Slice = tuple[str, str, int]  # (arm, scoring, length)
_CellKey = tuple[str, str, str, str, int, int, Fraction]


@dataclass(frozen=True)
class Delta:
    """The change of one metric at one length, on the cells both runs measured.

    Attributes:
        baseline: The metric of the baseline run on the paired cells.
        current: The metric of the current run on the same cells.
        delta: ``current - baseline`` (NaN where either is undefined).
        low: Lower bound of the 95% paired-bootstrap interval of ``delta`` (over needle
            groups); NaN with fewer than two groups.
        high: Upper bound of that interval.
        cells: Paired cases of this arm, scoring and length.
    """

    arm: str
    scoring: str
    length: int
    metric: str
    baseline: float
    current: float
    delta: float
    low: float
    high: float
    cells: int


@dataclass(frozen=True)
class Comparison:
    """Every delta of a run against a baseline, and how many cases could not be paired.

    Attributes:
        deltas: One per (arm, scoring, length, metric) with paired cells, in the current
            run's order, metrics in :data:`pytest_niah.stats.METRICS` order.
        unpaired_current: Cases of the current run that the baseline lacks.
        unpaired_baseline: Cases of the baseline that the current run lacks.
    """

    deltas: tuple[Delta, ...]
    unpaired_current: int
    unpaired_baseline: int

    def delta(self, arm: str, length: int, metric: str, scoring: str = "whole") -> Delta | None:
        """The delta of one metric at one length, or ``None`` when not compared."""
        for d in self.deltas:
            if (d.arm, d.scoring, d.length, d.metric) == (arm, scoring, length, metric):
                return d
        return None

    def regressions(self, thresholds: Sequence[Allowance]) -> list[str]:
        """One message per (arm, scoring, length, metric) that fell more than allowed.

        A metric with several thresholds is reported once, for the first it fails. A metric
        defined in the baseline but undefined (NaN) in the current run is a regression too.
        """
        messages = []
        for d in self.deltas:
            for threshold in thresholds:
                message = _regression(d, threshold) if threshold.metric == d.metric else None
                if message:
                    messages.append(message)
                    break
        return messages

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN becomes ``null``."""
        return {
            "deltas": [_encode(dataclasses.asdict(d)) for d in self.deltas],
            "unpaired_current": self.unpaired_current,
            "unpaired_baseline": self.unpaired_baseline,
        }


def compare_results(
    current: NiahResults, baseline: NiahResults, *, n_resamples: int = 1000, seed: int = 0
) -> Comparison:
    """Compare ``current`` with ``baseline`` on the cells both measured.

    For each (arm, scoring, length), both runs' metrics are computed, as the results tables
    define them, from the paired cells only (each run's invalid cases left out, as there),
    and the delta's interval from a paired bootstrap over needle groups.

    Args:
        current: The run under test.
        baseline: The reference run.
        n_resamples: Bootstrap resamples per interval.
        seed: Seed of the resampling; the same seed gives the same intervals.

    Returns:
        The :class:`Comparison`.
    """
    cur_cells, base_cells = _cells(current), _cells(baseline)
    slices: dict[_Slice, list[_CellKey]] = defaultdict(list)
    for key, case in cur_cells.items():  # current's case order
        if key in base_cells:
            slices[case.arm, case.scoring, case.length].append(key)
    paired = sum(map(len, slices.values()))
    cur_negs, base_negs = _negatives(current), _negatives(baseline)
    deltas = []
    for where, keys in slices.items():
        cur_q = _questions([cur_cells[k] for k in keys], cur_negs)
        base_q = _questions([base_cells[k] for k in keys], base_negs)
        deltas.extend(_slice_deltas(where, len(keys), cur_q, base_q, n_resamples, seed))
    return Comparison(
        deltas=tuple(deltas),
        unpaired_current=len(cur_cells) - paired,
        unpaired_baseline=len(base_cells) - paired,
    )


def _cells(results: NiahResults) -> dict[_CellKey, CaseResult]:
    positions = results.config.positions
    return {
        (
            c.group_id,
            c.arm,
            c.scoring,
            c.order,
            c.length,
            c.position,
            # The designed depth: index p of a different grid is another cell.
            Fraction(c.position, positions - 1) if positions > 1 else Fraction(0),
        ): c
        for c in results.cases
    }


def _negatives(results: NiahResults) -> dict[tuple[str, str, str, int], tuple[float, ...]]:
    return {(n.arm, n.scoring, n.group_id, n.length): n.scores for n in results.negatives}


def _questions(
    cases: Sequence[CaseResult], negatives: dict[tuple[str, str, str, int], tuple[float, ...]]
) -> list[QuestionScores]:
    """Per-question scores of one slice's cases, as the engine builds them."""
    import numpy as np

    from pytest_niah.measure.stats import QuestionScores

    by_group: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        by_group[case.group_id].append(case)
    questions = []
    for group_id, group in sorted(by_group.items()):
        valid = [c for c in group if c.problem is None]
        c0 = group[0]
        neg = np.asarray(negatives.get((c0.arm, c0.scoring, group_id, c0.length), ()), float)
        questions.append(
            QuestionScores(
                group_id=group_id,
                positives=np.array([c.cos_qh for c in valid]),
                controls=np.array([c.control_score for c in valid]),
                negatives=neg[np.isfinite(neg)],
                normalized=np.array([c.normalized for c in valid]),
            )
        )
    return questions


def _slice_deltas(
    where: _Slice,
    cells: int,
    current: list[QuestionScores],
    baseline: list[QuestionScores],
    n_resamples: int,
    seed: int,
) -> list[Delta]:
    from pytest_niah.measure.stats import METRICS, paired_bootstrap_delta, point_metrics

    cur, base = point_metrics(current), point_metrics(baseline)
    deltas = []
    for metric in METRICS:
        interval = paired_bootstrap_delta(
            current, baseline, metric=metric, n_resamples=n_resamples, seed=seed
        )
        deltas.append(
            Delta(
                *where,
                metric=metric,
                baseline=base[metric],
                current=cur[metric],
                delta=cur[metric] - base[metric],
                low=interval.low,
                high=interval.high,
                cells=cells,
            )
        )
    return deltas


def _regression(d: Delta, threshold: Allowance) -> str | None:
    """The failure message of one delta under one threshold, or ``None`` if it passes."""
    if math.isnan(d.baseline):
        return None  # nothing to fall from
    digits = metric_digits(d.metric)
    what = f"{METRIC_LABELS[d.metric]} at {d.length} tokens ({d.arm}, {d.scoring})"
    if math.isnan(d.current):
        return f"{what} is undefined in this run (baseline {fmt(d.baseline, digits)})"
    drop = d.baseline - d.current
    allowed = threshold.allowed(d.baseline)
    if not drop > allowed:
        return None
    limit = f"{threshold.amount:g}"
    if threshold.relative:
        limit = f"{fmt(allowed, digits)} ({threshold.amount:g}% of {fmt(d.baseline, digits)})"
    ci = f"[{fmt(d.low, digits - 1)}, {fmt(d.high, digits - 1)}]"
    return (
        f"{what} fell {fmt(drop, digits)} ({fmt(d.baseline, digits)} -> "
        f"{fmt(d.current, digits)}, 95% CI of the change {ci}) > allowed {limit}"
    )


def metric_digits(metric: str) -> int:
    """Decimals a metric is shown with."""
    # Separations are small cosine differences: three decimals would hide them.
    return 4 if metric == "separation" else 3
