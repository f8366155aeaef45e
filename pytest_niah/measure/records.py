"""The typed rows a measurement produces: scored cases, negatives, metric rows, intervals."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CaseResult:
    """One needle haystack scored against its question.

    Attributes:
        id: The test id, e.g. ``dietary-03-onehop-inverted-L4096-p07``.
        relative_position: Needle offset over the filler length: 0 = start, 1 = end.
        truncated: The needle starts past the tokens the model reads.
        cos_qh: cos(question, haystack).
        cos_qn: cos(question, needle embedded alone).
        normalized: cos_qh / cos_qn (NaN when cos_qn <= 0).
        control_score: Mean cos(question, same-length no-needle controls of this question).
        found: The haystack outscores its control.
        problem: Why the case's data is invalid (e.g. a non-finite embedding), else ``None``.
    """

    id: str
    group_id: str
    category: str
    arm: str
    scoring: str
    order: str
    length: int
    position: int
    relative_position: float
    name: str
    needle_offset: int
    needle_tokens: int
    truncated: bool
    cos_qh: float
    cos_qn: float
    normalized: float
    control_score: float
    found: bool
    problem: str | None = None


@dataclass(frozen=True)
class NegativeScores:
    """One question's scores against every no-needle control of one length (its negatives)."""

    arm: str
    scoring: str
    group_id: str
    length: int
    scores: tuple[float, ...]


@dataclass(frozen=True)
class MetricRow:
    """Metrics of one slice of cases: a length, or a length split by category/order/position.

    ``by`` names the split (``length``, ``category``, ``order``, ``position``) and ``key``
    the slice within it (empty for ``length``). Two-sample metrics are per-question means.
    """

    arm: str
    scoring: str
    length: int
    by: str
    key: str
    n_cases: int
    n_questions: int
    cos_qh: float
    cos_qn: float
    normalized: float
    comparative_ratio: float
    auc: float
    separation: float
    effect_size: float
    pearson_r: float
    slope: float
    begin: float
    middle: float
    end: float
    found: int
    missed: int
    truncated: int
    invalid: int


@dataclass(frozen=True)
class IntervalRow:
    """A 95% bootstrap interval (resampling needle groups) of one per-length metric."""

    arm: str
    scoring: str
    length: int
    metric: str
    point: float
    low: float
    high: float


@dataclass(frozen=True)
class RetrievalRow:
    """The retrieval view of one length: each needle haystack ranked among all haystacks.

    A case's haystack competes with every haystack of its length except its own
    question's other needle haystacks; acc@1, MRR and nDCG@10 are means over cases.
    """

    arm: str
    scoring: str
    length: int
    acc_at_1: float
    mrr: float
    ndcg_at_10: float


@dataclass(frozen=True)
class EffectiveLength:
    """The longest length up to which AUC holds (see README: effective context length)."""

    arm: str
    scoring: str
    length: int | None
    reference_auc: float
