"""Rules of experiment/shard_parts.py that mutants found unchecked (parts made here, no run)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from pytest_niah.embed.server_fingerprint import ServerFingerprint
from pytest_niah.experiment.shard_parts import Part, Shard, same_served_run

ROWS = ((1.0, 0.0), (0.0, 1.0))


def _part(index: int, seed: int, fingerprint: ServerFingerprint | None, answers: str) -> Part:
    model = {"fingerprint": answers, "identity": {"source": {"answers": answers}}}
    manifest = {"config": {"seed": seed}, "layout": {"model": model}}
    if fingerprint is not None:
        manifest["server"] = asdict(fingerprint)
    return Part(Path(f"part-{index}"), Shard(index, 2), manifest, [], np.zeros((0, 2)))


def test_parts_of_a_noisy_server_are_one_run_only_when_all_else_is_the_same():
    # Found (mutation, shard_parts.py:141 `or` -> `and`): matching fingerprints make two
    # parts one run only if everything but the answers key is the same, and both have one.
    fingerprint = ServerFingerprint(None, 64, "no limit within 64 tokens", 1e-3, ROWS)
    one, two = _part(1, 1, fingerprint, "a"), _part(2, 1, fingerprint, "b")
    assert same_served_run(one, two)
    assert same_served_run(one, _part(2, 2, fingerprint, "b")) is False  # another seed
    assert not same_served_run(one, _part(2, 1, None, "b"))  # no fingerprint
    assert not same_served_run(_part(1, 1, None, "a"), two)
