"""The vectors of a run, by input key: one-vector rows, dense or sparse, and token vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class VectorTable:
    """The vector of every input key: dense rows (or, for the lexical baseline, sparse ones)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self._parts: list[Any] = []
        self._matrix: Any = None
        # Inputs read as token vectors: key -> one row per token (float32).
        self.multi: dict[str, np.ndarray] = {}

    def add(self, keys: Sequence[str], rows: Any) -> None:
        """Add the rows of ``keys`` (an ndarray or a scipy sparse matrix)."""
        for key in keys:
            self.index[key] = len(self.index)
        self._parts.append(rows)
        self._matrix = None

    @property
    def matrix(self) -> Any:
        """Every row, in key order of arrival."""
        if self._matrix is None:
            if any(is_sparse(p) for p in self._parts):
                import scipy.sparse as sp

                self._matrix = sp.vstack(self._parts, format="csr")
            elif self._parts:
                self._matrix = np.concatenate(
                    [np.asarray(p, dtype=np.float32) for p in self._parts]
                )
            else:
                self._matrix = np.zeros((0, 0), dtype=np.float32)
        return self._matrix

    def rows(self, keys: Sequence[str]) -> np.ndarray:
        """Row indices of keys."""
        return np.fromiter((self.index[k] for k in keys), dtype=np.intp, count=len(keys))


def is_sparse(matrix: Any) -> bool:
    """Whether ``matrix`` is a scipy sparse matrix (scipy is not imported to find out)."""
    import sys

    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(matrix))
