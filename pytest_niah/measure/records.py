"""The typed rows a measurement produces: scored cases, negatives, metric rows, intervals.

Plain frozen dataclasses, cheap to build by the thousand. Their float fields are
:data:`Score`: NaN where undefined, written as ``null`` in JSON; the results file's schema is
generated from these classes (:mod:`pytest_niah.results.results_schema`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer


def _nan_from_null(value: Any) -> Any:
    if value is None:
        return math.nan
    if isinstance(value, float) and not math.isfinite(value):
        # The file format spells an undefined score null, and has no infinity.
        raise ValueError("a score is a finite number, or null where undefined")
    return value


def _null_from_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


# A float that may be undefined (NaN); JSON null (never NaN or Infinity).
Score = Annotated[
    float,
    BeforeValidator(_nan_from_null, json_schema_input_type=float | None),
    PlainSerializer(_null_from_nan, return_type=float | None),
]


@dataclass(frozen=True)
class CaseResult:
    """One needle haystack scored against its question.

    Attributes:
        id: The test id, e.g. ``dietary-03-onehop-inverted-L4096-p07``.
        relative_position: Needle offset over the filler length: 0 = start, 1 = end.
        truncated: The needle starts past the tokens the model reads.
        cos_qh: cos(question, haystack).
        cos_qn: cos(question, needle embedded alone).
        normalized: cos_qh / cos_qn; NaN where cos_qn is below the floor (see
            :data:`pytest_niah.measure.metrics.NORMALIZED_FLOOR`).
        control_score: cos(question, the control sharing this haystack's filler).
        found: The haystack outscores its control.
        control_id: That control.
        unread: The model reads exactly what it reads of that control: the needle is
            invisible to it by construction (scores tie; the case counts one half).
        duplicate_of: The case with the same haystack, where positions shared an offset.
        problem: Why the case's data is invalid (e.g. a non-finite embedding), else ``None``.
        seed: The haystack draw of ``--niah-seeds`` (``None``: the run's single draw, from
            its ``seed``).
    """

    id: str
    group_id: str
    category: str
    arm: str
    scoring: str
    order: str
    length: int
    position: int
    relative_position: Score
    name: str
    needle_offset: int
    needle_tokens: int
    truncated: bool
    cos_qh: Score
    cos_qn: Score
    normalized: Score
    control_score: Score
    found: bool
    control_id: str = ""
    unread: bool = False
    duplicate_of: str | None = None
    problem: str | None = None
    seed: int | None = None


@dataclass(frozen=True)
class NegativeScores:
    """One question's scores against its negatives: every control of one length, by id."""

    arm: str
    scoring: str
    group_id: str
    length: int
    control_ids: tuple[str, ...]
    scores: tuple[Score, ...]


@dataclass(frozen=True)
class MetricRow:
    """Metrics of one slice of cases: a length, or a length split by category/order/position.

    ``by`` names the split (``length``, ``category``, ``order``, ``position``) and ``key``
    the slice within it (empty for ``length``). Two-sample metrics are per-question means.

    Attributes:
        auc: AUC with unread cases counted one half (the gated AUC).
        auc_study: AUC as the study computes it: unread cases ranked as they happen to score.
        unread: Cases the model could not tell from their control.
        norm_excluded: Cases left out of the normalized similarity (needle alone below the
            floor).
        duplicates: Cases that repeat another case's haystack (not counted).
    """

    arm: str
    scoring: str
    length: int
    by: str
    key: str
    n_cases: int
    n_questions: int
    cos_qh: Score
    cos_qn: Score
    normalized: Score
    comparative_ratio: Score
    auc: Score
    auc_study: Score
    separation: Score
    effect_size: Score
    pearson_r: Score
    slope: Score
    begin: Score
    middle: Score
    end: Score
    found: int
    missed: int
    truncated: int
    unread: int
    norm_excluded: int
    duplicates: int
    invalid: int


@dataclass(frozen=True)
class IntervalRow:
    """A 95% bootstrap interval (resampling needle groups) of one per-length metric.

    Attributes:
        se: Standard deviation of the bootstrap replicates: the metric's standard error.
        groups: Needle groups resampled.
    """

    arm: str
    scoring: str
    length: int
    metric: str
    point: Score
    low: Score
    high: Score
    se: Score = math.nan
    groups: int = 0


@dataclass(frozen=True)
class RetrievalRow:
    """The retrieval view of one length: each needle haystack ranked among its negatives.

    A case's haystack competes with every control of its length (the question's negatives);
    acc@1, MRR and nDCG@10 are means over cases.
    """

    arm: str
    scoring: str
    length: int
    acc_at_1: Score
    mrr: Score
    ndcg_at_10: Score


@dataclass(frozen=True)
class EffectiveLength:
    """The longest length up to which AUC holds (see docs/metrics.md: effective context length)."""

    arm: str
    scoring: str
    length: int | None
    reference_auc: Score
