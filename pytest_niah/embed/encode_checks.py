"""What a model's encode call gave, checked: one row per text, one dimension, one width.

The encoder (:class:`~pytest_niah.embed.runner.Encoder`) calls these on every batch the
model embeds; a model whose own code raised is stopped by :func:`encode_failure`, with the
likely fix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_niah.errors import EmbedderError, EmbeddingError
from pytest_niah.haystacks.plan import ModelInput, base_kind


def encode_failure(
    name: str, items: list[ModelInput], exc: Exception, cached: bool
) -> EmbedderError:
    """The error for a model that raised while embedding a batch, with the likely fix."""
    kept = " (the vectors embedded before it are kept in the cache)" if cached else ""
    problem = (
        f"model {name!r} failed while embedding {len(items)} {items[0].kind} input(s) of up to "
        f"{max(i.tokens for i in items):,} tokens: {type(exc).__name__}: {exc}{kept}"
    )
    if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():
        return EmbedderError(problem, "lower --niah-token-budget or --niah-batch-size")
    return EmbedderError(
        problem, "check --niah-encode-kwargs and --niah-model-kwargs against the model card"
    )


def check_rows(name: str, rows: Any, expected: int) -> None:
    """One row per text: a 2-D array of ``expected`` rows."""
    shape = getattr(rows, "shape", None)
    if shape is None or len(shape) != 2 or shape[0] != expected:
        raise EmbeddingError(
            f"model {name!r} returned embeddings of shape {shape} for {expected} texts (one row "
            "per text expected)",
            "check --niah-encode-kwargs and the model's own code, which must keep every text",
        )


def check_dimension(name: str, dim: int, known: int) -> None:
    """The same dimension as the model's earlier vectors (``known``)."""
    if dim != known:
        raise EmbeddingError(
            f"model {name!r} returned {dim}-dimensional embeddings after {known}-dimensional ones",
            "check --niah-encode-kwargs (truncate_dim) and the model's code",
        )


def token_vector_arrays(
    name: str, items: list[ModelInput], rows: Any, first: np.ndarray | None
) -> list[np.ndarray]:
    """The token vectors of ``items``: one 2-D array per input, all of one width.

    ``first``: one of the run's earlier token vector arrays (all share its width), or ``None``.
    """
    arrays = [np.asarray(r, dtype=np.float32) for r in rows] if isinstance(rows, list) else []
    widths = {a.shape[1] for a in arrays if a.ndim == 2}
    if len(arrays) != len(items) or any(a.ndim != 2 or not len(a) for a in arrays):
        shapes = [getattr(a, "shape", None) for a in arrays] or type(rows).__name__
        raise EmbeddingError(
            f"model {name!r} returned token vectors of shapes {shapes} for {len(items)} "
            f"{base_kind(items[0].kind)} texts (one tokens x dimensions array per text "
            "expected)",
            "check the model's multi-vector code (encode_text(..., return_multivector=True))",
        )
    known = widths | ({first.shape[1]} if first is not None else set())
    if len(known) > 1:
        raise EmbeddingError(
            f"model {name!r} returned token vectors of {len(known)} different widths "
            f"({', '.join(map(str, sorted(known)))})",
            "check --niah-encode-kwargs and the model's multi-vector code",
        )
    return arrays
