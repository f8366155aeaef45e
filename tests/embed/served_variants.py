"""Other deployments the loopback server (openai_server.py) stands in for: dtypes, models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def rounded(rows: Any, dtype: str) -> Any:
    """``rows`` rounded to ``dtype`` (``bfloat16``: float32 with 8 bits of mantissa kept)."""
    import numpy as np

    if dtype == "float16":
        return rows.astype(np.float16).astype(np.float64)
    bits = np.asarray(rows, dtype=np.float32).view(np.uint32)
    keep = ((bits >> 16) & 1) + np.uint32(0x7FFF)  # round half to even
    return ((bits + keep) & np.uint32(0xFFFF0000)).view(np.float32).astype(np.float64)


def other_model(texts: list[str], rows: Any, spared: Sequence[str]) -> Any:
    """Another model of the same dimension: the rows turned by a fixed rotation.

    Texts in ``spared`` keep the first model's vectors.
    """
    import numpy as np

    rows = np.asarray(rows, dtype=np.float64)
    rotation, _ = np.linalg.qr(np.random.default_rng(43).standard_normal((rows.shape[1],) * 2))
    turned = rows @ rotation
    keep = np.array([text in spared for text in texts])
    return np.where(keep[:, None], rows, turned)
