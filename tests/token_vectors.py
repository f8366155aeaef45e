"""The fake models' embedding table: one fixed random vector per token id and width."""

from __future__ import annotations

import functools

import numpy as np


@functools.cache
def token_vector(token: int, dim: int) -> np.ndarray:
    """Token ``token``'s vector, read-only (shared by every fake model of the process)."""
    vector = np.random.default_rng(token % 2**32).standard_normal(dim)
    vector.setflags(write=False)
    return vector
