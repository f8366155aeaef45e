"""A retrieval view of the scores, as LongEmbed/MTEB report it: rank the relevant document.

Each query row scores a set of documents, exactly one of which is relevant (e.g. a
question against every haystack of one length, the relevant one being a haystack that
holds its needle). Other documents may be excluded from a row, e.g. the question's other
needle haystacks, which hold the answer too and so are neither relevant nor wrong.

Ties are ranked pessimistically: the relevant document ranks below every document with
an equal score, so a scorer that cannot tell documents apart gets chance-level results
rather than perfect ones. NaN scores count as the lowest possible score.
"""

from __future__ import annotations

import math

import numpy as np

RANK_METRICS = ("acc@1", "mrr", "ndcg@k")


def ranks(
    scores: np.ndarray, relevant: np.ndarray, exclude: np.ndarray | None = None
) -> np.ndarray:
    """1-based rank of each row's relevant document among the row's documents left in.

    Args:
        scores: Array of shape ``(n_queries, n_docs)``; higher is more relevant.
        relevant: Array of shape ``(n_queries,)``: the index of each row's relevant document.
        exclude: Optional boolean array of shape ``(n_queries, n_docs)``: documents to leave
            out of that row's ranking.

    Returns:
        Integer array of shape ``(n_queries,)``: 1 + the number of documents left in that
        score at least as high as the relevant one (pessimistic ties).

    Raises:
        ValueError: On mismatched shapes, an out-of-range index, or an excluded relevant document.
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-D (n_queries, n_docs), got shape {s.shape}")
    n_queries, n_docs = s.shape
    rel = np.asarray(relevant)
    if rel.shape != (n_queries,) or not np.issubdtype(rel.dtype, np.integer):
        raise ValueError(
            f"relevant must be {n_queries} integer indices, got {rel.shape} {rel.dtype}"
        )
    if rel.size and (rel.min() < 0 or rel.max() >= n_docs):
        raise ValueError(f"relevant indices must lie in [0, {n_docs})")
    left_in = np.ones(s.shape, dtype=bool)
    if exclude is not None:
        mask = np.asarray(exclude, dtype=bool)
        if mask.shape != s.shape:
            raise ValueError(f"exclude must have shape {s.shape}, got {mask.shape}")
        left_in = ~mask
    rows = np.arange(n_queries)
    if not left_in[rows, rel].all():
        raise ValueError("a row excludes its own relevant document")
    s = np.where(np.isnan(s), -np.inf, s)
    target = s[rows, rel]
    ahead = (s >= target[:, None]) & left_in
    ahead[rows, rel] = False
    counts: np.ndarray = ahead.sum(axis=1)
    return 1 + counts


def rank_metrics(
    scores: np.ndarray,
    relevant: np.ndarray,
    exclude: np.ndarray | None = None,
    *,
    k: int = 10,
) -> dict[str, float]:
    """Accuracy@1, mean reciprocal rank and nDCG@k, averaged over query rows.

    With one relevant document per row, nDCG@k is ``1 / log2(rank + 1)`` if ``rank <= k``,
    else 0 (the ideal DCG is 1); MRR is not truncated at ``k``.

    Args:
        scores: Array of shape ``(n_queries, n_docs)``; higher is more relevant.
        relevant: Array of shape ``(n_queries,)``: the index of each row's relevant document.
        exclude: Optional boolean array of shape ``(n_queries, n_docs)``: documents to leave
            out of that row's ranking.
        k: Cut-off of nDCG.

    Returns:
        ``{"acc@1": ..., "mrr": ..., "ndcg@k": ...}`` (the key is literally ``ndcg@k``; the
        cut-off is the argument). NaN for every metric when there are no rows.

    Raises:
        ValueError: On bad shapes or indices (see :func:`ranks`), or ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return metrics_from_ranks(ranks(scores, relevant, exclude), k=k)


def metrics_from_ranks(rank: np.ndarray, *, k: int = 10) -> dict[str, float]:
    """:func:`rank_metrics` from 1-based ranks of the relevant document (one per query row)."""
    r = np.asarray(rank, dtype=float)
    if r.size == 0:
        return dict.fromkeys(RANK_METRICS, math.nan)
    ndcg = np.where(r <= k, 1.0 / np.log2(r + 1.0), 0.0)
    return {
        "acc@1": float(np.mean(r == 1)),
        "mrr": float(np.mean(1.0 / r)),
        "ndcg@k": float(np.mean(ndcg)),
    }
