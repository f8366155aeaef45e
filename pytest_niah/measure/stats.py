"""Uncertainty of the metrics: bootstrap intervals over questions, paired deltas, effective length.

The unit of resampling is the question (needle group), not the case: the cases of one
question share its wording, its needle and its negatives, so they are not independent. A
resample draws questions with replacement and recomputes the metrics as if the drawn list
had been measured (:func:`~pytest_niah.measure.metrics.weighted_metrics`); a question drawn
twice counts twice. A comparison draws the same questions on both sides, so question
difficulty cancels and the interval of the change is as narrow as the pairing allows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_niah.measure.chance import above_chance
from pytest_niah.measure.metrics import METRICS, QuestionScores, point_metrics, weighted_metrics

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """A metric's point estimate, its confidence interval and standard error (NaN: undefined).

    Attributes:
        se: Standard deviation of the bootstrap replicates.
        groups: Questions resampled.
    """

    metric: str
    point: float
    low: float
    high: float
    se: float = math.nan
    groups: int = 0

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


def resample_counts(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each item is drawn in each bootstrap resample: shape (n_resamples, n_items)."""
    rng = np.random.default_rng(seed)
    if n_items == 0:
        return np.zeros((n_resamples, 0), dtype=np.int64)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_resamples)


def bootstrap_intervals(
    questions: Sequence[QuestionScores],
    *,
    n_resamples: int,
    seed: int,
    metric_names: Sequence[str] = METRICS,
    confidence: float = CONFIDENCE,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals of the metrics, resampling questions with replacement.

    Returns:
        Metric name to :class:`Interval`; the point is
        :func:`~pytest_niah.measure.metrics.point_metrics`; bounds are NaN with fewer than
        two questions. Resamples where a metric is undefined are dropped.
    """
    _check_bootstrap(n_resamples, confidence)
    points = point_metrics(questions, metric_names)
    if len(questions) < 2:
        return {
            m: Interval(m, points[m], math.nan, math.nan, math.nan, len(questions))
            for m in metric_names
        }
    counts = resample_counts(len(questions), n_resamples, seed)
    replicates = weighted_metrics(questions, counts, metric_names)
    return {
        m: _percentile(m, points[m], replicates[m], confidence, len(questions))
        for m in metric_names
    }


def paired_bootstrap_delta(
    current: Sequence[QuestionScores],
    baseline: Sequence[QuestionScores],
    *,
    metric: str,
    n_resamples: int,
    seed: int,
    confidence: float = CONFIDENCE,
) -> Interval:
    """Interval of ``metric(current) - metric(baseline)`` on the questions both runs measured.

    Questions are paired by ``group_id`` (those of one run only are left out); each resample
    draws the same questions on both sides.

    Raises:
        ValueError: an unknown metric, or a ``group_id`` repeated within one run.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {METRICS}")
    _check_bootstrap(n_resamples, confidence)
    cur, base = _by_group(current), _by_group(baseline)
    shared = sorted(cur.keys() & base.keys())
    cur_q, base_q = [cur[g] for g in shared], [base[g] for g in shared]
    point = point_metrics(cur_q, [metric])[metric] - point_metrics(base_q, [metric])[metric]
    if len(shared) < 2:
        return Interval(metric, point, math.nan, math.nan, math.nan, len(shared))
    counts = resample_counts(len(shared), n_resamples, seed)
    deltas = (
        weighted_metrics(cur_q, counts, [metric])[metric]
        - weighted_metrics(base_q, counts, [metric])[metric]
    )
    return _percentile(metric, point, deltas, confidence, len(shared))


def effective_length(
    lengths: Sequence[int],
    auc: Sequence[float],
    auc_low: Sequence[float],
    *,
    keep: float = 0.85,
) -> int | None:
    """The longest context length up to which retrieval holds up.

    A length passes when its AUC keeps at least ``keep`` of the shortest length's AUC and
    the lower bound of its interval is above chance
    (:func:`~pytest_niah.measure.chance.above_chance`). The answer is the longest length
    whose every shorter length also passes; NaN values fail.

    Returns:
        The effective length, or ``None`` when the shortest length already fails.

    Raises:
        ValueError: the sequences differ in size or a length repeats.
    """
    if not len(lengths) == len(auc) == len(auc_low):
        raise ValueError("lengths, auc and auc_low must have the same size")
    if len(set(lengths)) != len(lengths):
        raise ValueError(f"repeated lengths: {sorted(lengths)}")
    order = np.argsort(lengths, kind="stable")
    values = np.asarray(auc, dtype=float)[order]
    lows = np.asarray(auc_low, dtype=float)[order]
    if values.size == 0:
        return None
    above = np.fromiter((above_chance(float(low)) for low in lows), dtype=bool, count=lows.size)
    passes = (values >= keep * values[0]) & above
    n_ok = passes.size if passes.all() else int(np.argmin(passes))
    return int(np.asarray(lengths)[order][n_ok - 1]) if n_ok else None


def _percentile(
    metric: str, point: float, replicates: np.ndarray, confidence: float, groups: int
) -> Interval:
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return Interval(metric, point, math.nan, math.nan, math.nan, groups)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    se = float(finite.std(ddof=1)) if finite.size > 1 else math.nan
    return Interval(metric, point, float(low), float(high), se, groups)


def _by_group(questions: Sequence[QuestionScores]) -> dict[str, QuestionScores]:
    out: dict[str, QuestionScores] = {}
    for q in questions:
        if q.group_id in out:
            raise ValueError(f"group {q.group_id!r} appears twice")
        out[q.group_id] = q
    return out


def _check_bootstrap(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
