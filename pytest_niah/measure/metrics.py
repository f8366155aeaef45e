"""The study's metrics, defined once: per case, per question, per slice, and per resample.

For question q at length L (one arm and scoring):

- its *positives* are its needle haystacks (both orders, every position; a case repeating
  another's haystack is not counted twice); each is paired with the control that shares its
  filler (its *own control*);
- its *negatives* are its scores against every no-needle control of length L of the whole
  needle set, listed by id in the results: the same for a run of all groups, a subset, or
  the cells two runs share;
- a positive is *unread* when the model reads exactly what it reads of its own control (the
  needle lies past the model's window): it cannot tell them apart, so it counts as a tie,
  one half, in the comparative ratio and the AUC, and contributes no separation.

Metrics:

- **comparative ratio**: share of positives that outscore their own control, ties half
  (pooled over the slice's cases); 0.5 is chance;
- **AUC** of q: the mean over q's positives of its win rate against q's negatives (ties
  half; an unread positive 0.5). **AUC (study)** ranks unread positives as they happen to
  score, as the study does;
- **separation** of q: mean over q's positives of (score - mean negative score), 0 for an
  unread positive; **effect size**: separation over the pooled standard deviation of q's
  read positives and negatives;
- AUC, AUC (study), separation and effect size are averaged over questions (cosines are
  comparable only for one query);
- **normalized similarity** = cos(q, haystack) / cos(q, needle alone), undefined (and left
  out, counted) when the needle alone scores below :data:`NORMALIZED_FLOOR`: a needle that
  barely resembles its question gives no scale, and one such case would outweigh hundreds;
- **position effects**: Pearson r and slope of normalized similarity on relative position,
  and its mean in the first, middle and last third.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

# Below this cos(q, needle alone), normalized similarity is undefined (see module docs).
NORMALIZED_FLOOR = 0.1
POSITION_BINS = ("begin", "middle", "end")
# The per-length metrics with intervals and gates, in table order.
METRICS = ("normalized", "comparative_ratio", "auc", "auc_study", "separation", "effect_size")
_PER_QUESTION = ("auc", "auc_study", "separation", "effect_size")


def normalized_similarity(cos_qh: ArrayLike, cos_qn: ArrayLike) -> np.ndarray:
    """cos(q, haystack) / cos(q, needle); NaN where the needle alone scores below the floor."""
    qh = np.asarray(cos_qh, dtype=float)
    qn = np.asarray(cos_qn, dtype=float)
    out = np.full(np.broadcast(qh, qn).shape, np.nan)
    np.divide(qh, qn, out=out, where=qn >= NORMALIZED_FLOOR)
    return out


def wins(scores: ArrayLike, others: ArrayLike) -> np.ndarray:
    """1 where a score beats its counterpart, 0.5 on a tie, 0 below (elementwise)."""
    s = np.asarray(scores, dtype=float)
    o = np.asarray(others, dtype=float)
    won: np.ndarray = (s > o) + 0.5 * (s == o)
    return won


def comparative_ratio(scores: ArrayLike, control_scores: ArrayLike) -> float:
    """Share of needle haystacks that outscore their paired control, ties half; NaN if none."""
    won = wins(scores, control_scores)
    return float(won.mean()) if won.size else math.nan


def auc(positives: ArrayLike, negatives: ArrayLike) -> float:
    """P(random positive outranks random negative), ties half; NaN if a side is empty."""
    pos = np.asarray(positives, dtype=float).ravel()
    neg = np.asarray(negatives, dtype=float).ravel()
    if pos.size == 0 or neg.size == 0:
        return math.nan
    return float(wins(pos[:, None], neg[None, :]).mean())


def separation(positives: ArrayLike, negatives: ArrayLike) -> float:
    """Mean positive score minus mean negative score."""
    pos = np.asarray(positives, dtype=float)
    neg = np.asarray(negatives, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return math.nan
    return float(pos.mean() - neg.mean())


def pooled_sd(a: ArrayLike, b: ArrayLike) -> float:
    """Pooled standard deviation (ddof=1) of two samples; NaN with fewer than 3 values."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    n1, n2 = x.size, y.size
    if n1 + n2 < 3:
        return math.nan
    ss = (((x - x.mean()) ** 2).sum() if n1 else 0.0) + (((y - y.mean()) ** 2).sum() if n2 else 0.0)
    return math.sqrt(ss / (n1 + n2 - (n1 > 0) - (n2 > 0)))


def cohens_d(positives: ArrayLike, negatives: ArrayLike) -> float:
    """Standardized mean difference with the pooled (ddof=1) standard deviation.

    NaN when it is undefined (fewer than 3 scores, an empty side, or no spread at all).
    """
    pos = np.asarray(positives, dtype=float)
    neg = np.asarray(negatives, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return math.nan
    return _standardized(float(pos.mean() - neg.mean()), pos, neg)


def _standardized(difference: float, pos: np.ndarray, neg: np.ndarray) -> float:
    sd = pooled_sd(pos, neg)
    scale = max(1.0, *(abs(float(v.mean())) for v in (pos, neg) if v.size))
    # Sides of identical values can leave float dust (~1e-17) instead of an exact 0.
    if math.isnan(sd) or sd <= 1e-12 * scale:
        return math.nan
    return difference / sd


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


# -- per question ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionScores:
    """One question's scores at one length, in one arm and scoring.

    Attributes:
        group_id: The question's needle group; pairs questions across runs.
        positives: cos(question, needle haystack), one per (valid, distinct) case.
        controls: Each case's own-control score (same size as ``positives``).
        unread: Per case, whether the model could not tell it from its own control.
        negatives: cos(question, each negative control).
        normalized: Per-case normalized similarity (same size as ``positives``); may be NaN.
    """

    group_id: str
    positives: np.ndarray
    controls: np.ndarray
    unread: np.ndarray
    negatives: np.ndarray
    normalized: np.ndarray

    def __post_init__(self) -> None:
        for name in ("positives", "controls", "negatives", "normalized"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=float).ravel())
        object.__setattr__(self, "unread", np.asarray(self.unread, dtype=bool).ravel())
        n = self.positives.size
        if not self.controls.size == self.normalized.size == self.unread.size == n:
            raise ValueError(f"{self.group_id}: every per-case array needs one value per case")

    def per_question(self) -> dict[str, float]:
        """AUC, AUC (study), separation and effect size of this question (NaN if undefined)."""
        pos, neg = self.positives, self.negatives[np.isfinite(self.negatives)]
        read = ~self.unread
        if pos.size == 0 or neg.size == 0:
            return dict.fromkeys(_PER_QUESTION, math.nan)
        rates = np.where(read, wins(pos[:, None], neg[None, :]).mean(axis=1), 0.5)
        differences = np.where(read, pos - neg.mean(), 0.0)
        sep = float(differences.mean())
        return {
            "auc": float(rates.mean()),
            "auc_study": auc(pos, neg),
            "separation": sep,
            "effect_size": _standardized(sep, pos[read], neg) if read.any() else math.nan,
        }

    def ratio_wins(self) -> float:
        """Sum of the cases' wins against their own controls (unread ones tie)."""
        return float(np.where(self.unread, 0.5, wins(self.positives, self.controls)).sum())


def point_metrics(
    questions: Sequence[QuestionScores], names: Sequence[str] = METRICS
) -> dict[str, float]:
    """The metrics of a slice's questions, as the module documents them."""
    weights = np.ones((1, len(questions)))
    return {
        name: float(value[0]) for name, value in weighted_metrics(questions, weights, names).items()
    }


def weighted_metrics(
    questions: Sequence[QuestionScores], counts: np.ndarray, names: Sequence[str] = METRICS
) -> dict[str, np.ndarray]:
    """The metrics of many resamples at once, each given as how often each question is drawn.

    Row ``b`` equals :func:`point_metrics` of the list holding question ``i`` ``counts[b, i]``
    times (up to floating-point rounding).

    Args:
        questions: The questions.
        counts: Array of shape ``(n_resamples, len(questions))``.
        names: Which of :data:`METRICS` to compute.

    Returns:
        Metric name to an array of ``n_resamples`` values (NaN where undefined).
    """
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; expected some of {METRICS}")
    weights = np.asarray(counts, dtype=float)
    if weights.ndim != 2 or weights.shape[1] != len(questions):
        raise ValueError(f"counts must have shape (n, {len(questions)}), got {weights.shape}")
    out: dict[str, np.ndarray] = {}
    if "normalized" in names:
        finite = [q.normalized[np.isfinite(q.normalized)] for q in questions]
        out["normalized"] = _ratio(
            weights @ np.array([f.sum() for f in finite]),
            weights @ np.array([f.size for f in finite]),
        )
    if "comparative_ratio" in names:
        out["comparative_ratio"] = _ratio(
            weights @ np.array([q.ratio_wins() for q in questions]),
            weights @ np.array([q.positives.size for q in questions], dtype=float),
        )
    wanted = [n for n in _PER_QUESTION if n in names]
    if wanted:
        values = [q.per_question() for q in questions]
        for name in wanted:
            column = np.array([v[name] for v in values], dtype=float)
            finite = np.isfinite(column)
            out[name] = _ratio(weights @ np.where(finite, column, 0.0), weights @ finite)
    return {name: out[name] for name in names}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out
