"""Unit vectors and the score matrix read from them: cosine, chunk scorings and maxsim.

A haystack is given by its pieces (the input keys of its chunks); a question scores it by
cosine (``whole``), by its best chunk (``chunk-max``), by the mean of its chunks
(``chunk-mean``) or by late interaction over token vectors (``maxsim``).

``maxsim`` scores token vectors (a multi-vector model's output) by late interaction: each of
the question's token vectors takes its best cosine among the haystack's token vectors, and
the score is their mean (MeanMaxSim: ColBERT's MaxSim divided by the question's tokens, so it
lies in -1..1 like a cosine, whatever the question's length).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM


@dataclass(frozen=True)
class Scored:
    """Unit-normalized vectors of every input, and which rows are unusable.

    Attributes:
        matrix: One row per input key (a dense ndarray, or scipy sparse for TF-IDF).
        bad: True where the embedding was non-finite, or a zero dense vector.
        index: Input key -> row.
        multi: Token vectors (``maxsim``): input key -> unit rows, ``None`` where unusable.
    """

    matrix: Any
    bad: np.ndarray
    index: Mapping[str, int]
    multi: Mapping[str, np.ndarray | None] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        matrix: Any,
        index: Mapping[str, int],
        multi: Mapping[str, np.ndarray] | None = None,
    ) -> Scored:
        """Normalize rows; flag the unusable ones (they score NaN)."""
        import scipy.sparse as sp

        if multi:
            scored = cls.of(matrix, index)
            return cls(scored.matrix, scored.bad, index, {k: _unit(v) for k, v in multi.items()})

        if sp.issparse(matrix):
            # Sparse rows are lexical: an empty row (no known word) honestly scores 0.
            to_csr: Any = sp.csr_matrix  # scipy-stubs' overloads reject a matrix typed Any
            csr: Any = to_csr(matrix).astype(np.float64)
            norms = np.sqrt(np.asarray(csr.multiply(csr).sum(axis=1)).ravel())
            bad = ~np.isfinite(norms)
            scale = np.where(bad | (norms == 0), 0.0, 1.0 / np.where(norms == 0, 1.0, norms))
            return cls(sp.diags(scale) @ csr, bad, index)
        dense = np.asarray(matrix, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            norms = np.linalg.norm(dense, axis=1) if dense.size else np.zeros(len(dense))
        bad = ~np.isfinite(norms) | (norms == 0) | ~np.isfinite(dense).all(axis=1)
        safe = np.where(bad, 1.0, norms)
        return cls(np.where(bad[:, None], 0.0, dense / safe[:, None]), bad, index)

    def rows(self, keys: Sequence[str]) -> np.ndarray:
        """Row indices of keys."""
        return np.fromiter((self.index[k] for k in keys), dtype=np.intp, count=len(keys))

    def scores(
        self, queries: Sequence[str], pieces: Sequence[Sequence[str]], scoring: str
    ) -> np.ndarray:
        """cos(question, haystack) for each question and each haystack (given by its pieces).

        Haystacks the model reads alike (the same pieces) are scored once and share the
        result bit for bit, whatever their place in the matrix. The product is taken over the
        questions and haystacks in key order: a matrix product's last bits depend on where an
        entry sits in the matrix, so the order a plan lists its inputs in (a whole run's, or
        a gate job's read back from shard parts) must not reach the scores.
        """
        unique = sorted({tuple(p) for p in pieces})
        column = {p: i for i, p in enumerate(unique)}
        asked = sorted(set(queries))
        row = {q: i for i, q in enumerate(asked)}
        scores = self._scores(asked, unique, scoring)
        return scores[np.ix_([row[q] for q in queries], [column[tuple(p)] for p in pieces])]

    def _scores(
        self, queries: Sequence[str], pieces: Sequence[Sequence[str]], scoring: str
    ) -> np.ndarray:
        if scoring == MAXSIM:
            return self._maxsim(queries, pieces)
        flat = [k for keys in pieces for k in keys]
        starts = np.cumsum([0] + [len(keys) for keys in pieces[:-1]])
        q_rows = self.rows(queries)
        d_rows = self.rows(flat)
        q = self.matrix[q_rows]
        d = self.matrix[d_rows]
        if scoring == "chunk-mean":
            summed = _sum_runs(d, starts, len(flat))
            norms = _norms(summed)
            out = _dense(q @ summed.T) / np.where(norms > 0, norms, np.inf)
        else:
            raw = _dense(q @ d.T)
            out = np.maximum.reduceat(raw, starts, axis=1) if scoring == "chunk-max" else raw
        out[:, np.logical_or.reduceat(self.bad[d_rows], starts)] = np.nan
        out[self.bad[q_rows], :] = np.nan
        return out

    def _maxsim(self, queries: Sequence[str], pieces: Sequence[Sequence[str]]) -> np.ndarray:
        """Mean over each question's token vectors of their best cosine in each haystack."""
        out = np.full((len(queries), len(pieces)), np.nan)
        parts = {i: self.multi[k] for i, k in enumerate(queries)}
        usable = {i: p for i, p in parts.items() if p is not None}
        if not usable:
            return out
        rows = list(usable)
        tokens = np.concatenate(list(usable.values()))
        sizes = np.array([len(p) for p in usable.values()])
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        for j, keys in enumerate(pieces):
            docs = [self.multi[k] for k in keys]
            found = [d for d in docs if d is not None]
            if len(found) < len(docs):
                continue  # an unusable haystack scores NaN
            best = (tokens @ np.concatenate(found).T).max(axis=1).astype(float)
            out[rows, j] = np.add.reduceat(best, starts) / sizes
        return out


def _unit(vectors: np.ndarray) -> np.ndarray | None:
    """Token vectors scaled to unit length, or ``None`` when any is non-finite or zero."""
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2 or not len(rows) or not np.isfinite(rows).all():
        return None
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    if not (norms > 0).all():
        return None
    unit: np.ndarray = rows / norms
    return unit


def _dense(product: Any) -> np.ndarray:
    return np.asarray(product.toarray() if hasattr(product, "toarray") else product, dtype=float)


def _norms(matrix: Any) -> np.ndarray:
    if hasattr(matrix, "multiply"):
        norms: np.ndarray = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        return norms
    dense: np.ndarray = np.linalg.norm(np.asarray(matrix, dtype=float), axis=1)
    return dense


def _sum_runs(rows: Any, starts: np.ndarray, total: int) -> Any:
    """Sum consecutive runs of rows (one run per haystack) with a sparse 0/1 matrix."""
    import scipy.sparse as sp

    ends = np.append(starts[1:], total)
    owner = np.repeat(np.arange(len(starts)), ends - starts)
    aggregate = sp.csr_matrix(
        (np.ones(total), (owner, np.arange(total))), shape=(len(starts), total)
    )
    return aggregate @ rows
