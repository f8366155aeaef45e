"""A shard part's manifest is read by the one strict JSON reader (issue 23)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_niah.errors import ShardError
from pytest_niah.experiment.shard_parts import PART_SCHEMA, read_part, write_part

MANIFEST = {
    "part_schema": PART_SCHEMA,
    "shard": [1, 2],
    "config": {"model": "m"},
    "layout": {"plan": {"tokens": {}}},
    "batches": [],
}


def with_manifest_text(path, text: str) -> None:
    with np.load(path, allow_pickle=False) as data:
        keys, vectors = data["keys"], data["vectors"]
    np.savez(
        path.with_suffix(""),  # savez adds .npz
        manifest=np.frombuffer(text.encode(), dtype=np.uint8),
        keys=keys,
        vectors=vectors,
    )


@pytest.fixture
def part(tmp_path):
    path = tmp_path / "part.npz"
    write_part(path, MANIFEST, ["a", "b"], np.eye(2))
    return path


def test_a_written_part_reads_back(part):
    assert read_part(part).shard.count == 2


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda t: t.replace('"part_schema"', '"shard": [2, 2], "part_schema"', 1),
            "appears twice",
        ),
        (lambda t: t.replace('"config": {', '"config": {"x": NaN, ', 1), "NaN is not a JSON value"),
        (lambda t: t.replace('"config": {', '"config": {"x": 1e999, ', 1), "too large"),
    ],
)
def test_a_manifest_with_a_repeated_key_or_a_non_finite_number_is_refused(part, edit, problem):
    with np.load(part, allow_pickle=False) as data:
        text = bytes(data["manifest"]).decode()
    assert json.loads(text)["shard"] == [1, 2]
    with_manifest_text(part, edit(text))
    with pytest.raises(ShardError) as info:
        read_part(part)
    assert str(part) in str(info.value) and problem in str(info.value)
    assert "Fix:" in str(info.value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (json.dumps(str(PART_SCHEMA)), f'part schema "{PART_SCHEMA}", not a whole number'),
        ("true", "part schema true, not a whole number"),
        (str(PART_SCHEMA + 1), f"part schema {PART_SCHEMA + 1}, this one reads {PART_SCHEMA}"),
    ],
)
def test_a_part_schema_of_another_type_is_shown_as_it_is_written(part, value, shown):
    """``"2"`` (a string) against 2 was "part schema 2, this one reads 2": now told apart."""
    text = json.dumps({**MANIFEST, "part_schema": "PLACEHOLDER"}).replace('"PLACEHOLDER"', value)
    with_manifest_text(part, text)
    with pytest.raises(ShardError) as info:
        read_part(part)
    assert shown in str(info.value)


def test_a_part_with_no_inputs_reads_back_empty(tmp_path) -> None:
    """More shard jobs than inputs: a job's share is empty, and its part must still read."""
    path = tmp_path / "part-002-of-002.npz"
    manifest = {
        "part_schema": PART_SCHEMA,
        "shard": [2, 2],
        "config": {},
        "layout": {"plan": {"tokens": {}}},
        "batches": [],
    }
    write_part(path, manifest, [], np.zeros((0, 0), dtype=np.float32))
    part = read_part(path)
    assert part.keys == [] and part.vectors.size == 0


def test_vectors_stored_in_another_shape_read_back_one_row_per_key(tmp_path) -> None:
    """A part whose rows were stored with an extra axis still gives one flat row per key."""
    path = tmp_path / "part-001-of-001.npz"
    manifest = {
        "part_schema": PART_SCHEMA,
        "shard": [1, 1],
        "config": {},
        "layout": {"plan": {"tokens": {}}},
        "batches": [],
    }
    rows = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    write_part(path, manifest, ["a", "b"], rows)
    part = read_part(path)
    assert part.vectors.shape == (2, 3)
    assert part.vectors[1].tolist() == [3.0, 4.0, 5.0]
