"""Rules of ``embed/server_fingerprint.py`` beside tests/embed/test_served_answers.py (#34.6).

No server: a fingerprint is the vectors and numbers one run measured, so its match rule is
checked on vectors made here.
"""

from __future__ import annotations

import json

import numpy as np

from pytest_niah.embed.server_fingerprint import REGISTRY_FOLDER, ServerFingerprint, answers_key


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


def test_the_match_margin_is_four_times_the_spread():
    # Found (mutation, server_fingerprint.py:39 MATCH_MARGIN 4 -> 5): vectors moved by just
    # under 1% of their length match within 4 x 0.25%, not within 4 x 0.24% (5 x 0.24% would).
    rows = np.eye(3, 8)
    moved = rows.copy()
    moved[:, 7] = 0.01  # 0.01 / sqrt(1.0001): just under 1%
    assert _of(moved, spread=2.5e-3).matches(_of(rows, spread=0.0))
    assert not _of(moved, spread=2.4e-3).matches(_of(rows, spread=0.0))


def test_a_longer_grid_on_the_same_server_matches_where_both_probes_looked():
    # Found (mutation, server_fingerprint.py:114 and :126 min -> max): a probe of 128 tokens
    # that saw no limit agrees with one of 512 that saw a cut at 200: both read 128 of 128.
    rows = np.eye(3, 8)
    short = ServerFingerprint(None, 128, "no limit within 128 tokens", 0.0, _of(rows).vectors)
    long = ServerFingerprint(200, 512, "reads only the first 200", 0.0, _of(rows).vectors)
    cut = ServerFingerprint(100, 512, "reads only the first 100", 0.0, _of(rows).vectors)
    assert short.matches(long) and long.matches(short)
    assert not short.matches(cut) and not cut.matches(short)
    assert (long.reads(128), long.reads(300), short.reads(300)) == (128, 200, 300)


def test_zero_vectors_match_zero_vectors():
    # Found (mutation, server_fingerprint.py:133 `scale > 0` -> `>= 0`): rows of length 0 have
    # not moved (no division of 0 by 0).
    zeros = _of(np.zeros((3, 8)), spread=0.0)
    assert zeros.matches(_of(np.zeros((3, 8)), spread=0.0))


def test_the_registry_is_kept_in_a_new_cache_folder_and_read_back(tmp_path):
    # Found (mutation, server_fingerprint.py:152 parents=True, :98 a window of None, :157,
    # :169-170): the first run creates the registry (its cache folder too), the next run's
    # matching fingerprint gets the kept key; damaged entries and files only lose shortcuts.
    folder = tmp_path / "new" / "cache"
    rows = np.eye(3, 8)
    first = ServerFingerprint(None, 128, "no limit within 128 tokens", 1e-3, _of(rows).vectors)
    again = ServerFingerprint(None, 128, "no limit within 128 tokens", 2e-3, _of(rows).vectors)
    assert answers_key(first, "endpoint", folder) == first.key
    assert again.key != first.key and answers_key(again, "endpoint", folder) == first.key
    registry = folder / REGISTRY_FOLDER / "endpoint.json"
    registry.write_text(json.dumps([{"window": "x"}, *json.loads(registry.read_text())]))
    assert answers_key(again, "endpoint", folder) == first.key  # a bad entry is skipped
    for damaged in ("{not json", '{"a": 1}'):
        registry.write_text(damaged)
        assert answers_key(again, "endpoint", folder) == again.key


def test_each_mismatch_answers_false_not_a_falsy_stand_in():
    # Found (mutation, server_fingerprint.py:124, :128, :131 `return False` -> `return None`):
    # matches() is a bool for every reason two fingerprints differ.
    rows = _of(np.eye(3, 8)).vectors
    measured = ServerFingerprint(200, 512, "reads only the first 200", 0.0, rows)
    other_reason = ServerFingerprint(None, 0, "not deterministic", 0.0, rows)
    other_cut = ServerFingerprint(100, 512, "reads only the first 100", 0.0, rows)
    other_shape = ServerFingerprint(200, 512, "reads only the first 200", 0.0, rows[:2])
    unmeasured = ServerFingerprint(None, 0, "too few words", 0.0, rows)
    assert unmeasured.matches(other_reason) is False  # the reason differs
    assert measured.matches(other_cut) is False  # the reading differs
    assert measured.matches(other_shape) is False  # the vectors differ in shape


def test_a_fingerprint_is_a_value_that_cannot_change_once_measured():
    # Found (mutation seed 1415723878, server_fingerprint.py:68 frozen=True -> False): what a
    # run measured of its server is kept and compared as it was measured.
    import dataclasses

    import pytest

    fingerprint = _of(np.eye(3, dtype=np.float32))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fingerprint.window = 128  # type: ignore[misc]
    assert len({fingerprint, _of(np.eye(3, dtype=np.float32))}) == 1


def test_a_move_of_exactly_the_tolerance_still_matches():
    # Found (mutation seed 1704312573, server_fingerprint.py:144): "within the repeat
    # noise" includes its edge; only a move past the tolerance is another server.
    from pytest_niah.embed.server_watch import moved, tolerance

    base = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    nudged = base + np.array([[0.0, 0.25, 0.0], [0.0, 0.0, 0.0]])
    move = moved(base, nudged)
    spread = move / 4  # tolerance is four times the larger repeat noise: exactly the move
    assert tolerance(spread, spread) == move
    assert _of(base, spread).matches(_of(nudged, spread))
    assert not _of(base, spread * 0.99).matches(_of(nudged, spread * 0.99))


def test_a_fingerprint_reads_the_tokens_its_probe_saw_read():
    measured = ServerFingerprint(64, 510, "", 0.0, ())
    unlimited = ServerFingerprint(None, 510, "", 0.0, ())
    assert [measured.reads(n) for n in (10, 64, 65, 1000)] == [10, 64, 64, 64]
    assert [unlimited.reads(n) for n in (10, 1000)] == [10, 1000]


def test_without_a_cache_a_fingerprint_is_its_own_key_and_nothing_is_kept(tmp_path):
    fingerprint = _of(np.eye(2, 4))
    assert answers_key(fingerprint, "endpoint", None) == fingerprint.key
    assert not any(tmp_path.iterdir())


def test_a_served_model_is_told_by_its_class():
    from pytest_niah.embed.server_fingerprint import is_served

    class Served:
        def pin_answers(self, key, fingerprint): ...

    class Local:
        pin_answers = "a field, not a method"

    assert is_served(Served()) and not is_served(Local()) and not is_served(object())
