"""Uncertainty of the study's metrics: bootstrap intervals over questions, and effective length.

The unit of resampling is the question (needle group), not the case: the cases of one
question share its wording, its needle and its negatives, so they are not independent.
A bootstrap resample draws questions with replacement and recomputes the metrics as if
the drawn list had been measured; a question drawn twice counts twice.

Everything here works on plain arrays (:class:`QuestionScores`), so the engine can call it
without building results objects. Definitions match :func:`pytest_niah.analysis.metric_row`:

- ``normalized``: mean of the finite per-case normalized similarities, over all cases;
- ``comparative_ratio``: share of cases whose needle haystack outscores its paired control
  (ties half), over all cases;
- ``auc``, ``separation``, ``effect_size``: computed per question (its positives against its
  finite negatives), then the mean of the finite per-question values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_niah.measure import metrics

METRICS = ("normalized", "comparative_ratio", "auc", "separation", "effect_size")
# Metrics computed per question, then averaged over questions.
_PER_QUESTION = {
    "auc": metrics.auc,
    "separation": metrics.separation,
    "effect_size": metrics.cohens_d,
}


@dataclass(frozen=True)
class QuestionScores:
    """One question's scores at one length, in one arm.

    Attributes:
        group_id: The question's needle group; pairs questions across runs.
        positives: cos(question, needle haystack), one per case.
        controls: The paired control score of each case (same length as ``positives``).
        negatives: cos(question, every no-needle control of this length).
        normalized: Per-case normalized similarity (same length as ``positives``); may hold NaN.
    """

    group_id: str
    positives: np.ndarray
    controls: np.ndarray
    negatives: np.ndarray
    normalized: np.ndarray

    def __post_init__(self) -> None:
        for name in ("positives", "controls", "negatives", "normalized"):
            array = np.asarray(getattr(self, name), dtype=float).ravel()
            object.__setattr__(self, name, array)
        n = self.positives.size
        if self.controls.size != n or self.normalized.size != n:
            raise ValueError(
                f"{self.group_id}: positives, controls and normalized need one value per case"
                f" (got {n}, {self.controls.size}, {self.normalized.size})"
            )


@dataclass(frozen=True)
class Interval:
    """A metric's point estimate and its confidence interval (NaN bounds when undefined)."""

    metric: str
    point: float
    low: float
    high: float

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


def point_metrics(
    questions: Sequence[QuestionScores], metric_names: Sequence[str] = METRICS
) -> dict[str, float]:
    """The metrics of a list of questions, as :func:`pytest_niah.analysis.metric_row` defines them.

    Args:
        questions: The questions of one slice (a length, in one arm).
        metric_names: Which of :data:`METRICS` to compute.

    Returns:
        Metric name to value; NaN where undefined (e.g. no questions).
    """
    _check_metrics(metric_names)
    out: dict[str, float] = {}
    if "normalized" in metric_names:
        out["normalized"] = metrics.nanmean(_concat([q.normalized for q in questions]))
    if "comparative_ratio" in metric_names:
        out["comparative_ratio"] = metrics.comparative_ratio(
            _concat([q.positives for q in questions]), _concat([q.controls for q in questions])
        )
    for name, values in _per_question(questions, metric_names).items():
        out[name] = metrics.nanmean(values)
    return {name: out[name] for name in metric_names}


def resample_counts(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each item is drawn in each bootstrap resample.

    Args:
        n_items: Items to resample (questions); each resample draws this many.
        n_resamples: Number of resamples.
        seed: Seed of the generator; the same seed gives the same counts.

    Returns:
        Integer array of shape ``(n_resamples, n_items)`` whose rows sum to ``n_items``.
    """
    rng = np.random.default_rng(seed)
    if n_items == 0:
        return np.zeros((n_resamples, 0), dtype=np.int64)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_resamples)


def weighted_metrics(
    questions: Sequence[QuestionScores],
    counts: np.ndarray,
    metric_names: Sequence[str] = METRICS,
) -> dict[str, np.ndarray]:
    """Metrics of many resamples at once, each given as how often each question is drawn.

    Row ``b`` of the result equals :func:`point_metrics` of the list holding question ``i``
    ``counts[b, i]`` times (up to floating-point rounding).

    Args:
        questions: The questions.
        counts: Array of shape ``(n_resamples, len(questions))``.
        metric_names: Which of :data:`METRICS` to compute.

    Returns:
        Metric name to an array of ``n_resamples`` values (NaN where undefined).
    """
    _check_metrics(metric_names)
    weights = np.asarray(counts, dtype=float)
    if weights.ndim != 2 or weights.shape[1] != len(questions):
        raise ValueError(f"counts must have shape (n, {len(questions)}), got {weights.shape}")
    out: dict[str, np.ndarray] = {}
    if "normalized" in metric_names:
        finite = [q.normalized[np.isfinite(q.normalized)] for q in questions]
        sums = np.array([f.sum() for f in finite])
        sizes = np.array([f.size for f in finite], dtype=float)
        out["normalized"] = _ratio(weights @ sums, weights @ sizes)
    if "comparative_ratio" in metric_names:
        # Ties count half, as in metrics.comparative_ratio.
        wins = np.array(
            [
                np.sum((q.positives > q.controls) + 0.5 * (q.positives == q.controls))
                for q in questions
            ]
        )
        sizes = np.array([q.positives.size for q in questions], dtype=float)
        out["comparative_ratio"] = _ratio(weights @ wins, weights @ sizes)
    for name, values in _per_question(questions, metric_names).items():
        finite = np.isfinite(values)
        out[name] = _ratio(weights @ np.where(finite, values, 0.0), weights @ finite)
    return {name: out[name] for name in metric_names}


def bootstrap_intervals(
    questions: Sequence[QuestionScores],
    *,
    metric_names: Sequence[str] = METRICS,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals of the metrics, resampling questions with replacement.

    Args:
        questions: The questions of one slice (a length, in one arm).
        metric_names: Which of :data:`METRICS` to compute.
        n_resamples: Number of bootstrap resamples.
        confidence: Coverage of the interval, e.g. 0.95.
        seed: Seed of the resampling; the same seed gives the same intervals.

    Returns:
        Metric name to :class:`Interval`. The point is :func:`point_metrics`; the bounds are
        NaN with fewer than two questions. Resamples where a metric is undefined are dropped.
    """
    _check_bootstrap(n_resamples, confidence)
    points = point_metrics(questions, metric_names)
    if len(questions) < 2:
        return {m: Interval(m, points[m], math.nan, math.nan) for m in metric_names}
    counts = resample_counts(len(questions), n_resamples, seed)
    replicates = weighted_metrics(questions, counts, metric_names)
    return {m: _percentile(m, points[m], replicates[m], confidence) for m in metric_names}


def paired_bootstrap_delta(
    current: Sequence[QuestionScores],
    baseline: Sequence[QuestionScores],
    *,
    metric: str,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Interval of ``metric(current) - metric(baseline)`` on the questions both runs measured.

    Questions are paired by ``group_id``; those present in only one run are left out, and
    each resample draws the same groups on both sides, so question difficulty cancels.

    Args:
        current: The questions of the run under test.
        baseline: The questions of the reference run.
        metric: One of :data:`METRICS`.
        n_resamples: Number of bootstrap resamples.
        confidence: Coverage of the interval, e.g. 0.95.
        seed: Seed of the resampling.

    Returns:
        The :class:`Interval` of the delta (named after ``metric``); its point is the delta of
        :func:`point_metrics` on the shared groups; NaN bounds with fewer than two of them.

    Raises:
        ValueError: For an unknown metric, or a ``group_id`` repeated within one run.
    """
    _check_metrics([metric])
    _check_bootstrap(n_resamples, confidence)
    cur, base = _by_group(current), _by_group(baseline)
    shared = sorted(cur.keys() & base.keys())
    cur_q, base_q = [cur[g] for g in shared], [base[g] for g in shared]
    point = point_metrics(cur_q, [metric])[metric] - point_metrics(base_q, [metric])[metric]
    if len(shared) < 2:
        return Interval(metric, point, math.nan, math.nan)
    counts = resample_counts(len(shared), n_resamples, seed)
    deltas = (
        weighted_metrics(cur_q, counts, [metric])[metric]
        - weighted_metrics(base_q, counts, [metric])[metric]
    )
    return _percentile(metric, point, deltas, confidence)


def effective_length(
    lengths: Sequence[int],
    auc: Sequence[float],
    auc_low: Sequence[float],
    *,
    keep: float = 0.85,
    chance: float = 0.5,
) -> int | None:
    """The longest context length up to which retrieval holds up.

    A length passes when its AUC keeps at least ``keep`` of the shortest length's AUC and
    the lower bound of its interval is above ``chance``. The answer is the longest length
    whose every shorter length also passes: a later length passing again after a failure
    does not count. NaN values fail.

    Args:
        lengths: Context lengths (any order, no repeats).
        auc: AUC at each length.
        auc_low: Lower confidence bound of the AUC at each length.
        keep: Share of the shortest length's AUC a length must keep.
        chance: The AUC lower bound must exceed this.

    Returns:
        The effective length, or ``None`` when the shortest length already fails (or there
        are no lengths).

    Raises:
        ValueError: If the sequences differ in size or a length repeats.
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
    passes = (values >= keep * values[0]) & (lows > chance)
    # Number of leading passes: argmin finds the first failure (0 if it is the shortest).
    n_ok = passes.size if passes.all() else int(np.argmin(passes))
    return int(np.asarray(lengths)[order][n_ok - 1]) if n_ok else None


def _per_question(
    questions: Sequence[QuestionScores], metric_names: Sequence[str]
) -> dict[str, np.ndarray]:
    """Per-question two-sample metrics (only those asked for: AUC is slow)."""
    wanted = [name for name in _PER_QUESTION if name in metric_names]
    values: dict[str, list[float]] = {name: [] for name in wanted}
    for q in questions:
        # Invalid scores carry no ranking information (metric_row drops bad negatives too).
        pos = q.positives[np.isfinite(q.positives)]
        neg = q.negatives[np.isfinite(q.negatives)]
        for name in wanted:
            values[name].append(_PER_QUESTION[name](pos, neg))
    return {name: np.array(v, dtype=float) for name, v in values.items()}


def _percentile(metric: str, point: float, replicates: np.ndarray, confidence: float) -> Interval:
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return Interval(metric, point, math.nan, math.nan)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return Interval(metric, point, float(low), float(high))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _concat(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.empty(0)


def _by_group(questions: Sequence[QuestionScores]) -> dict[str, QuestionScores]:
    out: dict[str, QuestionScores] = {}
    for q in questions:
        if q.group_id in out:
            raise ValueError(f"group {q.group_id!r} appears twice")
        out[q.group_id] = q
    return out


def _check_metrics(metric_names: Sequence[str]) -> None:
    unknown = [m for m in metric_names if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; expected some of {METRICS}")


def _check_bootstrap(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
