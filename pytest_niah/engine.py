"""Run the reference experiment: config -> haystacks -> one embedding pass -> scores -> tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .analysis import summarize
from .config import NiahConfig
from .corpus import Corpus, load_corpus
from .embedders import Embedder, load_embedder
from .grid import case_id
from .haystack import Haystack, HaystackBuilder
from .needles import NeedleGroup, NeedleSet, load_needle_set
from .results import CaseResult, ModelInfo, NegativeScores, NiahResults, package_versions

# Which needle each arm inserts; arms share haystacks when they share a kind.
ARM_KIND = {"onehop": "onehop", "literal": "literal"}


class EmbeddingError(RuntimeError):
    """The model returned embeddings that cannot be scored."""


@dataclass(frozen=True)
class Scored:
    """Unit-normalized embeddings of every unique text, and which rows are unusable."""

    matrix: Any
    bad: np.ndarray  # True where the embedding was non-finite or zero

    def row(self, index: int) -> Any:
        """One normalized embedding."""
        return self.matrix[index]


def query_text(group: NeedleGroup, arm: str) -> str:
    """The text embedded as the query of ``group`` in ``arm``."""
    return group.question


def run_experiment(
    config: NiahConfig,
    *,
    embedder: Embedder | None = None,
    corpus: Corpus | None = None,
    needle_set: NeedleSet | None = None,
) -> NiahResults:
    """Run the whole experiment of ``config`` and return its results.

    Args:
        config: What to run.
        embedder: A ready embedder; built from ``config`` when omitted.
        corpus: Books; loaded from ``config.corpus`` when omitted.
        needle_set: Needle groups; loaded from ``config.needles`` and selected by
            ``config.groups`` when omitted.
    """
    needle_set = needle_set or load_needle_set(config.needles).select(config.groups or None)
    corpus = corpus or load_corpus(config.corpus)
    embedder = embedder or load_embedder(config)
    kinds = tuple(dict.fromkeys(ARM_KIND[arm] for arm in config.arms))

    builder = HaystackBuilder(corpus, needle_set, embedder.token_spans, config.seed)
    haystacks = builder.build(
        config.lengths, config.positions, kinds, config.orders, config.controls
    )

    documents = _unique([h.text for h in haystacks] + [h.needle for h in haystacks if h.needle])
    queries = _unique([query_text(g, arm) for arm in config.arms for g in needle_set.groups])
    # Documents first: the lexical baseline fits its vocabulary on them.
    docs = _normalize(embedder.encode_documents(documents), len(documents))
    qs = _normalize(embedder.encode_queries(queries), len(queries))
    doc_index = {text: i for i, text in enumerate(documents)}
    query_index = {text: i for i, text in enumerate(queries)}

    cases, negatives = _score(
        config, needle_set, haystacks, embedder.max_tokens, docs, qs, doc_index, query_index
    )
    return NiahResults(
        config=config,
        model=ModelInfo(
            name=config.model, fingerprint=embedder.fingerprint, max_tokens=embedder.max_tokens
        ),
        corpus={
            "name": corpus.name,
            "fingerprint": corpus.fingerprint(),
            "books": [b.name for b in corpus.books],
        },
        needle_set={
            "name": needle_set.name,
            "source": needle_set.source,
            "fingerprint": needle_set.fingerprint(),
            "groups": len(needle_set.groups),
        },
        versions=package_versions(),
        audit=builder.audit(),
        cases=tuple(cases),
        negatives=tuple(negatives),
        tables=summarize(cases, negatives),
    )


def _score(
    config: NiahConfig,
    needle_set: NeedleSet,
    haystacks: Sequence[Haystack],
    max_tokens: int | None,
    docs: Scored,
    qs: Scored,
    doc_index: dict[str, int],
    query_index: dict[str, int],
) -> tuple[list[CaseResult], list[NegativeScores]]:
    groups = {g.id: g for g in needle_set.groups}
    controls: dict[int, list[Haystack]] = {}
    needles: dict[tuple[str, str, str, int, int], Haystack] = {}
    for h in haystacks:
        if h.is_control:
            controls.setdefault(h.length, []).append(h)
        else:
            needles[h.group_id, h.kind, h.order, h.length, h.position] = h  # type: ignore[index]

    cases: list[CaseResult] = []
    negatives: list[NegativeScores] = []
    for arm in config.arms:
        for group in needle_set.groups:
            q = query_index[query_text(group, arm)]
            for length in config.lengths:
                pool = controls[length]
                neg = [_cos(qs, q, docs, doc_index[c.text]) for c in pool]
                negatives.append(NegativeScores(arm, group.id, length, tuple(neg)))
                own = [s for c, s in zip(pool, neg, strict=True) if c.group_id == group.id]
                control_score = float(np.mean(own))
                for order in config.orders:
                    for position in range(config.positions):
                        h = needles[group.id, ARM_KIND[arm], order, length, position]
                        cases.append(
                            _case(
                                arm,
                                groups[group.id],
                                h,
                                q,
                                control_score,
                                max_tokens,
                                docs,
                                qs,
                                doc_index,
                            )
                        )
    return cases, negatives


def _case(
    arm: str,
    group: NeedleGroup,
    h: Haystack,
    q: int,
    control_score: float,
    max_tokens: int | None,
    docs: Scored,
    qs: Scored,
    doc_index: dict[str, int],
) -> CaseResult:
    assert h.needle is not None and h.needle_offset is not None and h.needle_tokens is not None
    hi, ni = doc_index[h.text], doc_index[h.needle]
    cos_qh = _cos(qs, q, docs, hi)
    cos_qn = _cos(qs, q, docs, ni)
    problem = None
    if qs.bad[q] or docs.bad[hi] or docs.bad[ni] or not math.isfinite(control_score):
        problem = "non-finite or zero embedding (query, haystack, needle or control)"
    filler = h.length - h.needle_tokens
    return CaseResult(
        id=case_id(group.id, arm, h.order or "", h.length, h.position or 0),
        group_id=group.id,
        category=group.category,
        arm=arm,
        order=h.order or "",
        length=h.length,
        position=h.position or 0,
        relative_position=h.needle_offset / filler if filler else 0.0,
        name=h.name or "",
        needle_offset=h.needle_offset,
        needle_tokens=h.needle_tokens,
        truncated=max_tokens is not None and h.needle_offset >= max_tokens,
        cos_qh=cos_qh,
        cos_qn=cos_qn,
        normalized=float(cos_qh / cos_qn) if cos_qn > 0 else math.nan,
        control_score=control_score,
        found=bool(cos_qh > control_score),
        problem=problem,
    )


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def _normalize(matrix: Any, rows: int) -> Scored:
    """Unit rows; a non-finite (or zero dense) row is flagged and scores NaN, never raises."""
    if getattr(matrix, "shape", (None,))[0] != rows:
        raise EmbeddingError(
            f"the model returned {getattr(matrix, 'shape', None)} embeddings for {rows} texts"
        )
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        sp = None
    if sp is not None and sp.issparse(matrix):
        # Sparse rows are lexical: an empty row (no known word) honestly scores 0.
        matrix = sp.csr_matrix(matrix, dtype=np.float64)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        bad = ~np.isfinite(norms)
        scale = np.where(bad | (norms == 0), 0.0, 1.0 / np.where(norms == 0, 1.0, norms))
        return Scored(sp.diags(scale) @ matrix, bad)
    dense = np.asarray(matrix, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.linalg.norm(dense, axis=1)
    bad = ~np.isfinite(norms) | (norms == 0) | ~np.isfinite(dense).all(axis=1)
    safe = np.where(bad, 1.0, norms)
    return Scored(dense / safe[:, None], bad)


def _cos(qs: Scored, q: int, docs: Scored, d: int) -> float:
    if qs.bad[q] or docs.bad[d]:
        return math.nan
    a, b = qs.row(q), docs.row(d)
    if hasattr(a, "multiply"):
        return float(a.multiply(b).sum())
    return float(np.dot(a, b))
