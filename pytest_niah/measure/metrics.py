"""The study's metrics as pure functions of score arrays.

Positives and negatives are defined per question (see :mod:`pytest_niah.analysis`):
cosine scores are comparable only for the same query, so every two-sample metric is
computed within one question and then averaged over questions.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

POSITION_BINS = ("begin", "middle", "end")


def normalized_similarity(cos_qh: ArrayLike, cos_qn: ArrayLike) -> np.ndarray:
    """cos(q, haystack) / cos(q, needle); NaN where the needle alone scores <= 0.

    A needle that does not resemble its question at all gives no scale to normalize by.
    """
    qh = np.asarray(cos_qh, dtype=float)
    qn = np.asarray(cos_qn, dtype=float)
    out = np.full(np.broadcast(qh, qn).shape, np.nan)
    np.divide(qh, qn, out=out, where=qn > 0)
    return out


def comparative_ratio(scores: ArrayLike, control_scores: ArrayLike) -> float:
    """Share of needle haystacks that outscore their paired no-needle control (0.5 = chance).

    Ties count half, so a model that cannot tell them apart scores exactly 0.5.
    """
    s = np.asarray(scores, dtype=float)
    c = np.asarray(control_scores, dtype=float)
    if s.size == 0:
        return math.nan
    return float(np.mean((s > c) + 0.5 * (s == c)))


def auc(positives: ArrayLike, negatives: ArrayLike) -> float:
    """Area under the ROC curve: P(random positive outranks random negative), ties half.

    Computed as the Mann-Whitney U statistic over ``n_pos * n_neg`` from scipy's mid-ranks,
    which equals scikit-learn's ``roc_auc_score`` (the tests pin that) at a fraction of its
    validation cost: the tables need thousands of AUCs. NaN if a side is empty.
    """
    from scipy.stats import rankdata

    pos = np.asarray(positives, dtype=float).ravel()
    neg = np.asarray(negatives, dtype=float).ravel()
    if pos.size == 0 or neg.size == 0:
        return math.nan
    ranks = rankdata(np.concatenate([pos, neg]))
    u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2
    return float(u / (pos.size * neg.size))


def separation(positives: ArrayLike, negatives: ArrayLike) -> float:
    """Mean positive score minus mean negative score."""
    pos = np.asarray(positives, dtype=float)
    neg = np.asarray(negatives, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return math.nan
    return float(pos.mean() - neg.mean())


def cohens_d(positives: ArrayLike, negatives: ArrayLike) -> float:
    """Standardized mean difference with the pooled (ddof=1) standard deviation.

    NaN when it is undefined (fewer than 3 scores, or no spread at all).
    """
    pos = np.asarray(positives, dtype=float)
    neg = np.asarray(negatives, dtype=float)
    n1, n2 = pos.size, neg.size
    if n1 + n2 < 3 or n1 == 0 or n2 == 0:
        return math.nan
    var1 = pos.var(ddof=1) if n1 > 1 else 0.0
    var2 = neg.var(ddof=1) if n2 > 1 else 0.0
    pooled = math.sqrt(((n1 - 1) * var1 + (n2 - 1) * var2) / (n1 + n2 - 2))
    # Sides of identical values can leave float dust (~1e-17) instead of an exact 0.
    scale = max(1.0, abs(float(pos.mean())), abs(float(neg.mean())))
    if pooled <= 1e-12 * scale:
        return math.nan
    return float((pos.mean() - neg.mean()) / pooled)


@dataclass(frozen=True)
class PositionEffects:
    """How a score depends on where the needle sits (relative position 0 = start, 1 = end)."""

    pearson_r: float
    slope: float
    begin: float
    middle: float
    end: float


def position_bin(relative: float) -> str:
    """``begin`` for the first third, ``middle``, ``end`` for the last third."""
    if relative < 1 / 3:
        return "begin"
    return "middle" if relative <= 2 / 3 else "end"


def position_effects(relative_positions: ArrayLike, scores: ArrayLike) -> PositionEffects:
    """Pearson r and least-squares slope of score on relative position, and mean score per bin."""
    from scipy import stats

    x = np.asarray(relative_positions, dtype=float)
    y = np.asarray(scores, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        with warnings.catch_warnings():
            # Scores equal up to rounding make scipy warn; r is then honestly NaN or ~0.
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", getattr(stats, "NearConstantInputWarning", Warning))
            warnings.simplefilter("ignore", getattr(stats, "ConstantInputWarning", Warning))
            r = float(stats.pearsonr(x, y).statistic)
            slope = float(stats.linregress(x, y).slope)
    elif x.size >= 2 and np.ptp(x) > 0:
        r, slope = math.nan, 0.0
    else:
        r, slope = math.nan, math.nan
    bins = np.array([position_bin(v) for v in x])
    means = {name: _mean(y[bins == name]) for name in POSITION_BINS}
    return PositionEffects(pearson_r=r, slope=slope, **means)


def nanmean(values: Sequence[float] | ArrayLike) -> float:
    """Mean of the finite values; NaN when there are none (no warning)."""
    array = np.asarray(values, dtype=float)
    return _mean(array[np.isfinite(array)])


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan
