"""The part file's rows digest (experiment/shard_parts.py): a part whose rows are not the ones
written under its keys is refused, naming the file (#46.4). Parts made here, no run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.errors import ShardError
from pytest_niah.experiment.shard_parts import PART_SCHEMA, read_part, rows_digest, write_part

KEYS = ["a", "b", "c"]
ROWS = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], dtype=np.float32)
REFUSED = r"part-001-of-002\.npz: its vectors do not match its keys \(the rows' digest differs"


def part_manifest(index: int, count: int) -> dict:
    """A part's manifest, all but its digest (``write_part`` adds it)."""
    return {
        "part_schema": PART_SCHEMA,
        "shard": [index, count],
        "config": {"seed": 1},
        "layout": {"plan": {"tokens": {}}, "model": {"fingerprint": "m"}},
        "batches": [],
    }


def _raw(path: Path, manifest: dict, keys: list[str], vectors: np.ndarray) -> None:
    """A part written as ``write_part`` does, but with the manifest's digest as given."""
    buffer = io.BytesIO()
    np.savez(
        buffer,
        manifest=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8),
        keys=np.asarray(keys, dtype="U64"),
        vectors=vectors,
    )
    path.write_bytes(buffer.getvalue())


def test_a_part_read_back_unchanged_passes_its_digest(tmp_path: Path):
    path = tmp_path / "part-001-of-002.npz"
    write_part(path, part_manifest(1, 2), KEYS, ROWS)
    part = read_part(path)
    assert part.keys == KEYS and np.array_equal(part.vectors, ROWS)
    assert part.manifest["rows_digest"] == rows_digest(KEYS, ROWS)


@pytest.mark.parametrize(
    ("keys", "vectors"),
    [
        (KEYS, ROWS[[1, 0, 2]]),  # two rows swapped
        (["b", "a", "c"], ROWS),  # two keys swapped
        (KEYS, ROWS + np.float32(1e-3) * np.eye(3, 2, dtype=np.float32)),  # a value changed
    ],
    ids=["rows swapped", "keys swapped", "a value changed"],
)
def test_a_part_whose_digest_does_not_match_its_rows_is_named_and_refused(
    tmp_path: Path, keys, vectors
):
    path = tmp_path / "part-001-of-002.npz"
    manifest = {**part_manifest(1, 2), "rows_digest": rows_digest(KEYS, ROWS)}
    _raw(path, manifest, keys, vectors)
    with pytest.raises(ShardError, match=REFUSED) as refused:
        read_part(path)
    assert "do not edit part files" in str(refused.value)


@pytest.mark.parametrize("digest", [None, "", 0, "0" * 64])
def test_a_part_without_its_digest_or_with_another_value_is_refused(tmp_path: Path, digest):
    path = tmp_path / "part-001-of-002.npz"
    manifest = part_manifest(1, 2)
    if digest is not None:
        manifest["rows_digest"] = digest
    _raw(path, manifest, KEYS, ROWS)
    with pytest.raises(ShardError, match=REFUSED):
        read_part(path)


def test_an_empty_part_has_a_digest_too_and_it_is_checked(tmp_path: Path):
    path = tmp_path / "part-001-of-002.npz"
    empty = np.zeros((0, 2), dtype=np.float32)
    _raw(path, {**part_manifest(1, 2), "rows_digest": rows_digest(KEYS, ROWS)}, [], empty)
    with pytest.raises(ShardError, match=REFUSED):
        read_part(path)
    _raw(path, {**part_manifest(1, 2), "rows_digest": rows_digest([], empty)}, [], empty)
    assert read_part(path).keys == []


def test_the_digest_reads_the_keys_in_order_and_the_rows_as_little_endian_float32():
    assert rows_digest(KEYS, ROWS) == rows_digest(KEYS, ROWS.astype(np.float64))
    assert rows_digest(KEYS, ROWS) == rows_digest(KEYS, ROWS.astype(">f4"))
    assert rows_digest(KEYS, ROWS) != rows_digest(KEYS[::-1], ROWS)
    assert rows_digest(KEYS, ROWS) != rows_digest(KEYS, ROWS[::-1])
    assert len(rows_digest(KEYS, ROWS)) == 64
