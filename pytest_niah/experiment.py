"""Run the reference experiment: config -> haystacks -> one embedding pass -> scores -> tables.

For every (arm, scoring, length) the engine builds one score matrix: each question
against every haystack of that length (all controls and the arm's needle haystacks).
Cases, negatives, the retrieval view and the bootstrap intervals all read that matrix.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.paths import CACHE_ENV
from pytest_niah.embed.embedders import Embedder, load_embedder
from pytest_niah.errors import EmbeddingError, NiahCacheWarning, NiahError
from pytest_niah.haystacks.builder import Haystack, HaystackBuilder
from pytest_niah.haystacks.chunking import chunk_bounds, chunk_texts  # noqa: F401 - chunk_texts: public here too
from pytest_niah.haystacks.grid import case_id
from pytest_niah.inputs.corpus import Corpus, load_corpus
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, load_needle_set
from pytest_niah.measure.analysis import summarize
from pytest_niah.measure.records import (
    CaseResult,
    EffectiveLength,
    IntervalRow,
    NegativeScores,
    RetrievalRow,
)
from pytest_niah.results.niah_results import (
    SCHEMA_VERSION,
    ModelInfo,
    NiahResults,
    package_versions,
)

DEFAULT_CHUNK_TOKENS = 512  # for models without a window (the lexical baseline)


@dataclass(frozen=True)
class Scored:
    """Unit-normalized embeddings of every unique text, and which rows are unusable."""

    matrix: Any
    bad: np.ndarray  # True where the embedding was non-finite (or a zero dense vector)


def needle_kind(arm: str) -> str:
    """Which needle an arm inserts: literal needles for ``literal``, one-hop otherwise."""
    return "literal" if arm == "literal" else "onehop"


def query_text(group: NeedleGroup, arm: str, expansions: Any = None) -> str:
    """The text embedded as the query of ``group`` in ``arm`` (expanded for ``expandN``)."""
    if not arm.startswith("expand"):
        return group.question
    from pytest_niah.inputs.expansions import arm_size

    return expansions.expand(group.question, group.id, arm_size(arm))


def run_experiment(
    config: NiahConfig,
    *,
    embedder: Embedder | None = None,
    corpus: Corpus | None = None,
    needle_set: NeedleSet | None = None,
    expansions: Any = None,
    results_cache: str | os.PathLike[str] | None = None,
    on_reuse: Callable[[Path], None] | None = None,
) -> NiahResults:
    """Run the whole experiment of ``config`` and return its results.

    Args:
        config: What to run.
        embedder: A ready embedder; built from ``config`` when omitted.
        corpus: Books; loaded from ``config.corpus`` when omitted.
        needle_set: Needle groups; loaded from ``config.needles`` and selected by
            ``config.groups`` when omitted.
        expansions: Expansion terms for ``expandN`` arms; loaded from
            ``config.expansions`` when needed and omitted.
        results_cache: A folder of finished results keyed by everything that determines
            them (:func:`results_key`); a hit skips the whole run, a damaged entry is
            recomputed.
        on_reuse: Called with the cached file's path when a cached result is returned.
    """
    needle_set = needle_set or load_needle_set(config.needles).select(config.groups or None)
    if expansions is None and any(a.startswith("expand") for a in config.arms):
        from pytest_niah.inputs.expansions import load_expansions

        expansions = load_expansions(config.expansions)
    corpus = corpus or load_corpus(config.corpus)
    embedder = embedder or load_embedder(config)
    if results_cache is None:
        return _run(config, embedder, corpus, needle_set, expansions)
    path = (
        Path(results_cache)
        / f"{results_key(config, embedder, corpus, needle_set, expansions)}.json"
    )
    if path.is_file():
        try:
            cached = NiahResults.load(path)
        except (NiahError, OSError):
            pass  # damaged, foreign or unreadable: recompute and replace it
        else:
            if on_reuse is not None:
                on_reuse(path)
            return cached
    results = _run(config, embedder, corpus, needle_set, expansions)
    try:
        results.save(path)
    except OSError as exc:
        # An unusable cache folder loses only the shortcut, never the results: warn, go on.
        warnings.warn(
            NiahCacheWarning(
                f"pytest-niah: the results cache {Path(results_cache)} cannot store this run "
                f"({exc.strerror or exc}), so a re-run will compute it again. Fix: remove what "
                "is in the way or make it writable, or point the cache elsewhere "
                f"(--niah-cache-dir or {CACHE_ENV})"
            ),
            stacklevel=2,
        )
    return results


def results_key(
    config: NiahConfig, embedder: Embedder, corpus: Corpus, needle_set: NeedleSet, expansions: Any
) -> str:
    """A hash of everything the results depend on: config, model, data and package versions."""
    identity = {
        "schema": SCHEMA_VERSION,
        "config": config.to_dict(),
        "model": embedder.fingerprint,
        "corpus": corpus.fingerprint(),
        "needles": needle_set.fingerprint(),
        "expansions": expansions.fingerprint() if expansions is not None else None,
        "versions": package_versions(),
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _run(
    config: NiahConfig, embedder: Embedder, corpus: Corpus, needle_set: NeedleSet, expansions: Any
) -> NiahResults:
    kinds = tuple(dict.fromkeys(needle_kind(arm) for arm in config.arms))

    builder = HaystackBuilder(corpus, needle_set, embedder.token_spans, config.seed)
    haystacks = builder.build(
        config.lengths, config.positions, kinds, config.orders, config.controls
    )
    max_tokens = embedder.max_tokens
    chunk_tokens = config.chunk_tokens or max_tokens or DEFAULT_CHUNK_TOKENS
    pieces, within_chunk = _pieces(config, haystacks, embedder, chunk_tokens)

    documents = _unique(
        [t for parts in pieces.values() for ts in parts.values() for t in ts]
        + [h.needle for h in haystacks if h.needle]
    )
    queries = _unique(
        [query_text(g, arm, expansions) for arm in config.arms for g in needle_set.groups]
    )
    # Documents first: the lexical baseline fits its vocabulary on them.
    scorer = _Scorer(
        docs=_normalize(embedder.encode_documents(documents), len(documents), embedder),
        queries=_normalize(embedder.encode_queries(queries), len(queries), embedder),
        doc_index={text: i for i, text in enumerate(documents)},
        query_index={text: i for i, text in enumerate(queries)},
    )
    window = _Window(max_tokens, within_chunk)
    out = _Collected(config.orders)
    for arm in config.arms:
        rows = [scorer.query_index[query_text(g, arm, expansions)] for g in needle_set.groups]
        for scoring in config.scoring:
            for length in config.lengths:
                columns = [h for h in haystacks if h.length == length and _belongs(h, arm)]
                matrix = scorer.matrix(rows, [pieces[h.id][scoring] for h in columns], scoring)
                out.add(arm, scoring, length, needle_set, columns, matrix, rows, scorer, window)

    tables = summarize(out.cases, out.negatives)
    intervals = _intervals(config, out) if config.bootstrap else ()
    return NiahResults(
        config=config,
        model=ModelInfo(name=config.model, fingerprint=embedder.fingerprint, max_tokens=max_tokens),
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
            "expansions": expansions.fingerprint() if expansions is not None else None,
        },
        versions=package_versions(),
        audit=builder.audit(),
        cases=tuple(out.cases),
        negatives=tuple(out.negatives),
        tables=tables,
        intervals=intervals,
        retrieval=tuple(out.retrieval),
        effective_lengths=_effective_lengths(config, tables, intervals),
    )


def _belongs(h: Haystack, arm: str) -> bool:
    return h.is_control or h.kind == needle_kind(arm)


def _pieces(
    config: NiahConfig, haystacks: Sequence[Haystack], embedder: Embedder, chunk_tokens: int
) -> tuple[dict[str, dict[str, list[str]]], dict[str, int]]:
    """Per haystack and scoring, the texts that score it; needles' offsets in their chunk.

    The offsets (per needle haystack id) decide the truncation flag of chunk scorings.
    """
    chunked = any(s != "whole" for s in config.scoring)
    spans = embedder.token_spans([h.text for h in haystacks]) if chunked else None
    pieces: dict[str, dict[str, list[str]]] = {}
    within: dict[str, int] = {}
    for i, h in enumerate(haystacks):
        chunks: list[str] = []
        if spans is not None:
            bounds = chunk_bounds(h.text, spans[i], chunk_tokens)
            chunks = [h.text[spans[i][a][0] : spans[i][b - 1][1]] for a, b in bounds]
            if h.needle_offset is not None:
                within[h.id] = next(
                    h.needle_offset - a for a, b in bounds if a <= h.needle_offset < b
                )
        pieces[h.id] = {s: [h.text] if s == "whole" else chunks for s in config.scoring}
    return pieces, within


@dataclass(frozen=True)
class _Window:
    """Which needles a model still reads, given how haystacks are cut."""

    max_tokens: int | None
    within_chunk: dict[str, int]

    def truncated(self, h: Haystack, scoring: str) -> bool:
        assert h.needle_offset is not None
        if self.max_tokens is None:
            return False
        within = h.needle_offset if scoring == "whole" else self.within_chunk[h.id]
        return within >= self.max_tokens


@dataclass
class _Scorer:
    docs: Scored
    queries: Scored
    doc_index: dict[str, int]
    query_index: dict[str, int]

    def cosine(self, query_row: int, text: str) -> float:
        d = self.doc_index[text]
        if self.queries.bad[query_row] or self.docs.bad[d]:
            return math.nan
        return float(_dense(self.queries.matrix[[query_row]] @ self.docs.matrix[[d]].T)[0, 0])

    def matrix(self, rows: list[int], pieces: list[list[str]], scoring: str) -> np.ndarray:
        """cos(question, haystack) for each question row and haystack (its pieces' texts)."""
        flat = [self.doc_index[t] for texts in pieces for t in texts]
        starts = np.cumsum([0] + [len(texts) for texts in pieces[:-1]])
        docs = self.docs.matrix[flat]
        queries = self.queries.matrix[rows]
        if scoring == "chunk-mean":
            summed = _aggregation(starts, len(flat)) @ docs
            norms = _row_norms(summed)
            scores = _dense(queries @ summed.T) / np.where(norms > 0, norms, np.inf)
        else:
            raw = _dense(queries @ docs.T)
            scores = np.maximum.reduceat(raw, starts, axis=1) if scoring == "chunk-max" else raw
        bad_piece = np.logical_or.reduceat(self.docs.bad[flat], starts)
        scores[:, bad_piece] = np.nan
        scores[self.queries.bad[rows], :] = np.nan
        return scores


@dataclass
class _Collected:
    orders: tuple[str, ...]
    cases: list[CaseResult] = field(default_factory=list)
    negatives: list[NegativeScores] = field(default_factory=list)
    retrieval: list[RetrievalRow] = field(default_factory=list)
    questions: dict[tuple[str, str, int], list[Any]] = field(default_factory=dict)

    def add(
        self,
        arm: str,
        scoring: str,
        length: int,
        needle_set: NeedleSet,
        columns: list[Haystack],
        matrix: np.ndarray,
        rows: list[int],
        scorer: _Scorer,
        window: _Window,
    ) -> None:
        """Cases, negatives, retrieval rows and per-question scores of one matrix."""
        from pytest_niah.measure.retrieval import rank_metrics
        from pytest_niah.measure.stats import QuestionScores

        control_cols = [j for j, h in enumerate(columns) if h.is_control]
        ranked_rows, relevant, excluded = [], [], []
        questions = []
        for g, group in enumerate(needle_set.groups):
            negatives = matrix[g, control_cols]
            self.negatives.append(NegativeScores(arm, scoring, group.id, length, tuple(negatives)))
            own = [j for j in control_cols if columns[j].group_id == group.id]
            control_score = float(np.mean(matrix[g, own]))
            mine = [j for j, h in enumerate(columns) if not h.is_control and h.group_id == group.id]
            # Grid order: needle order as configured, then position.
            mine.sort(key=lambda j: (self.orders.index(columns[j].order), columns[j].position))
            group_cases = []
            for j in mine:
                h = columns[j]
                case = _case(arm, scoring, group, h, float(matrix[g, j]), control_score, window)
                cos_qn = scorer.cosine(rows[g], h.needle or "")
                case = _with_needle_score(case, cos_qn)
                group_cases.append(case)
                exclude = np.zeros(len(columns), dtype=bool)
                exclude[[k for k in mine if k != j]] = True
                ranked_rows.append(matrix[g])
                relevant.append(j)
                excluded.append(exclude)
            self.cases.extend(group_cases)
            valid = [c for c in group_cases if c.problem is None]
            questions.append(
                QuestionScores(
                    group_id=group.id,
                    positives=np.array([c.cos_qh for c in valid]),
                    controls=np.array([c.control_score for c in valid]),
                    negatives=negatives[np.isfinite(negatives)],
                    normalized=np.array([c.normalized for c in valid]),
                )
            )
        self.questions[arm, scoring, length] = questions
        if ranked_rows:
            m = rank_metrics(np.array(ranked_rows), np.array(relevant), np.array(excluded))
            self.retrieval.append(
                RetrievalRow(arm, scoring, length, m["acc@1"], m["mrr"], m["ndcg@k"])
            )


def _case(
    arm: str,
    scoring: str,
    group: NeedleGroup,
    h: Haystack,
    cos_qh: float,
    control_score: float,
    window: _Window,
) -> CaseResult:
    assert h.needle_offset is not None and h.needle_tokens is not None
    filler = h.length - h.needle_tokens
    problem = None
    if not (math.isfinite(cos_qh) and math.isfinite(control_score)):
        problem = "non-finite or zero embedding (query, haystack, needle or control)"
    return CaseResult(
        id=case_id(group.id, arm, h.order or "", h.length, h.position or 0, scoring),
        group_id=group.id,
        category=group.category,
        arm=arm,
        scoring=scoring,
        order=h.order or "",
        length=h.length,
        position=h.position or 0,
        relative_position=h.needle_offset / filler if filler else 0.0,
        name=h.name or "",
        needle_offset=h.needle_offset,
        needle_tokens=h.needle_tokens,
        truncated=window.truncated(h, scoring),
        cos_qh=cos_qh,
        cos_qn=math.nan,
        normalized=math.nan,
        control_score=control_score,
        found=bool(cos_qh > control_score),
        problem=problem,
    )


def _with_needle_score(case: CaseResult, cos_qn: float) -> CaseResult:
    problem = case.problem
    if problem is None and not math.isfinite(cos_qn):
        problem = "non-finite or zero embedding (query, haystack, needle or control)"
    normalized = case.cos_qh / cos_qn if cos_qn > 0 else math.nan
    return replace(case, cos_qn=cos_qn, normalized=normalized, problem=problem)


def _intervals(config: NiahConfig, out: _Collected) -> tuple[IntervalRow, ...]:
    from pytest_niah.measure.stats import bootstrap_intervals

    rows = []
    for (arm, scoring, length), questions in out.questions.items():
        found = bootstrap_intervals(questions, n_resamples=config.bootstrap, seed=config.seed)
        for metric, interval in found.items():
            rows.append(
                IntervalRow(
                    arm, scoring, length, metric, interval.point, interval.low, interval.high
                )
            )
    return tuple(rows)


def _effective_lengths(
    config: NiahConfig, tables: Sequence[Any], intervals: Sequence[IntervalRow]
) -> tuple[EffectiveLength, ...]:
    from pytest_niah.measure.stats import effective_length

    low = {(r.arm, r.scoring, r.length): r.low for r in intervals if r.metric == "auc"}
    out = []
    for arm in config.arms:
        for scoring in config.scoring:
            rows = [r for r in tables if (r.by, r.arm, r.scoring) == ("length", arm, scoring)]
            rows.sort(key=lambda r: r.length)
            if not rows:
                continue
            aucs = [r.auc for r in rows]
            # Without bootstrap intervals the point AUC stands in for the lower bound.
            lows = [low.get((arm, scoring, r.length), r.auc) for r in rows]
            best = effective_length([r.length for r in rows], aucs, lows)
            out.append(EffectiveLength(arm, scoring, best, rows[0].auc))
    return tuple(out)


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def _dense(product: Any) -> np.ndarray:
    return np.asarray(product.toarray() if hasattr(product, "toarray") else product, dtype=float)


def _row_norms(matrix: Any) -> np.ndarray:
    if hasattr(matrix, "multiply"):
        return np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    return np.linalg.norm(np.asarray(matrix, dtype=float), axis=1)


def _aggregation(starts: np.ndarray, total: int) -> Any:
    """A sparse 0/1 matrix that sums consecutive runs of rows (one run per haystack)."""
    import scipy.sparse as sp

    ends = np.append(starts[1:], total)
    owner = np.repeat(np.arange(len(starts)), ends - starts)
    return sp.csr_matrix((np.ones(total), (owner, np.arange(total))), shape=(len(starts), total))


def _normalize(matrix: Any, rows: int, embedder: Embedder) -> Scored:
    """Unit rows; a non-finite (or zero dense) row is flagged and scores NaN.

    Raises:
        EmbeddingError: the embedder returned another number of rows than it got texts.
    """
    if getattr(matrix, "shape", (None,))[0] != rows:
        name = getattr(embedder, "name", type(embedder).__name__)
        raise EmbeddingError(
            f"model {name!r} returned embeddings of shape {getattr(matrix, 'shape', None)} for "
            f"{rows} texts (one row per text expected). Fix: check --niah-encode-kwargs and a "
            "custom embedder's encode_documents/encode_queries, which must keep every text"
        )
    import scipy.sparse as sp

    if sp.issparse(matrix):
        # Sparse rows are lexical: an empty row (no known word) honestly scores 0.
        matrix = sp.csr_matrix(matrix, dtype=np.float64)
        norms = _row_norms(matrix)
        bad = ~np.isfinite(norms)
        scale = np.where(bad | (norms == 0), 0.0, 1.0 / np.where(norms == 0, 1.0, norms))
        return Scored(sp.diags(scale) @ matrix, bad)
    dense = np.asarray(matrix, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.linalg.norm(dense, axis=1)
    bad = ~np.isfinite(norms) | (norms == 0) | ~np.isfinite(dense).all(axis=1)
    safe = np.where(bad, 1.0, norms)
    return Scored(np.where(bad[:, None], 0.0, dense / safe[:, None]), bad)
