"""Rules of ``embed/server_fingerprint.py`` beside tests/embed/test_served_answers.py (#34.6).

No server: a fingerprint is the vectors and numbers one run measured, so its match rule is
checked on vectors made here.
"""

from __future__ import annotations

import numpy as np

from pytest_niah.embed.server_fingerprint import ServerFingerprint


def _of(vectors: np.ndarray, spread: float = 1e-3) -> ServerFingerprint:
    rows = tuple(tuple(float(x) for x in row) for row in vectors)
    return ServerFingerprint(64, 510, "note", spread, rows)


def test_vectors_match_by_how_far_they_moved_relative_to_their_length():
    # Found (mutation seed 1954570716, server_fingerprint.py:128): a server whose vectors
    # are short (not normalised) is still told apart by direction: the move is divided by
    # the vectors' length, whatever that length is.
    rng = np.random.default_rng(7)
    for length in (1e-4, 1.0, 1e3):
        base = length * rng.standard_normal((3, 16)) / 4
        elsewhere = length * rng.standard_normal((3, 16)) / 4
        nudged = base * (1 + 1e-4)
        assert _of(base).matches(_of(nudged)), length
        assert not _of(base).matches(_of(elsewhere)), length
