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


def test_probes_that_measured_nothing_match_only_for_the_same_reason():
    # Found (mutation seed 1414629215, server_fingerprint.py:119): a probe that measured
    # no window (probed 0) says why in its note; another reason is another server setup.
    rows = np.eye(3, 16)
    unmeasured = ServerFingerprint(None, 0, "not deterministic", 0.0, _of(rows).vectors)
    same = ServerFingerprint(None, 0, "not deterministic", 0.0, _of(rows).vectors)
    other = ServerFingerprint(None, 0, "too few one-token words", 0.0, _of(rows).vectors)
    assert unmeasured.matches(same)
    assert not unmeasured.matches(other) and not other.matches(unmeasured)
    assert not unmeasured.matches(_of(rows))  # measured against not measured


def test_the_tolerance_is_the_noisier_fingerprints_spread():
    # Found (mutation seed 981343202, server_fingerprint.py:134): two measurements of one
    # noisy server match within 4x the larger spread, not the smaller one.
    rows = np.eye(3, 8)
    moved = rows.copy()
    moved[:, 7] = 0.01  # every vector moved by 1% of its length
    quiet, noisy = _of(rows, spread=1e-5), _of(moved, spread=5e-3)
    assert noisy.matches(quiet) and quiet.matches(noisy)  # 1% <= 4 x 0.5%
    assert not _of(moved, spread=1e-3).matches(quiet)  # 1% > 4 x 0.1%
