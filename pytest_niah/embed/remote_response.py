"""The vectors of an OpenAI-compatible ``POST /embeddings`` answer, every one checked.

A server that drops, adds, repeats or reorders inputs, or answers with booleans, nested or
non-finite values, is refused with the likely fix; the rows come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pytest_niah.errors import EmbedderError

# Fields of a GET /models entry that name what is served and stay put between calls
# ("created" does not: vLLM stamps it with the time of the request; nor infinity's "stats").
# infinity reports its "backend" and "capabilities"; a server naming its "dtype" is heard.
STABLE_FIELDS = (
    "id",
    "root",
    "parent",
    "max_model_len",
    "revision",
    "version",
    "digest",
    "backend",
    "capabilities",
    "dtype",
)


def response_vectors(body: Any, expected: int, bad: Callable[..., EmbedderError]) -> np.ndarray:
    """The ``expected`` vectors of ``body`` in input order; ``bad(problem, hint)`` refuses."""
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, list):
        raise bad("returned JSON without a 'data' list of embeddings")
    if len(data) != expected:
        raise bad(
            f"returned {len(data)} embeddings for {expected} inputs"
            + (" (a truncated batch)" if len(data) < expected else ""),
            "the server drops or adds inputs, e.g. past its own batch limit: lower "
            "--niah-batch-size (texts per request), or check the server's logs",
        )
    rows: dict[int, Any] = {}
    for item in data:
        index = item.get("index") if isinstance(item, Mapping) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected:
            raise bad(f"returned an embedding with index {index!r} for {expected} inputs")
        if index in rows:
            raise bad(f"returned index {index} twice")
        rows[index] = item.get("embedding")
    try:
        matrix = np.asarray([rows[i] for i in range(expected)], dtype=np.float32)
    except (TypeError, ValueError):
        raise bad(
            "returned embeddings that are not lists of numbers of one length",
            "ask the server for float embeddings (OpenAI's encoding_format 'float')",
        ) from None
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise bad("returned empty or nested embeddings")
    # JSON true/false pass numpy as 1.0/0.0 (a bool is an int): never a float vector.
    if any(type(value) is bool for row in rows.values() for value in row):
        raise bad(
            "returned embeddings of JSON booleans (true/false), not numbers",
            "ask the server for float embeddings (OpenAI's encoding_format 'float'), "
            "not a binary or quantized format",
        )
    if not np.isfinite(matrix).all():
        raise bad(
            "returned non-finite values (NaN or infinity) in its embeddings",
            "check the server's dtype and logs: the model overflows",
        )
    return matrix
