"""Snapshot files are written whole or not at all, like every other output.

syrupy rewrites an ``.ambr`` file in place; pytest-niah's extension stages it and replaces
the file through :func:`pytest_niah.files.write_atomic`. A write that fails (a full disk, a
kill, a failing rename) leaves the previous snapshot byte for byte, and no temporary file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("syrupy")

from syrupy.data import Snapshot, SnapshotCollection

from pytest_niah.results.snapshots import extension_for


class Exploding:
    """Snapshot data whose text cannot be made: the write fails half-way through the file."""

    def __str__(self) -> str:
        raise OSError(28, "No space left on device")


def write(folder: Path, entries: dict[str, object], *, merge: bool = True) -> Path:
    """Write ``entries`` as snapshots of ``folder``'s test file, as syrupy does."""
    extension = extension_for(folder)
    location = folder / "test_niah_snapshot.ambr"
    collection = SnapshotCollection(location=str(location))
    for name, data in entries.items():
        collection.add(Snapshot(name=name, data=data))
    folder.mkdir(parents=True, exist_ok=True)
    extension.serializer_class.write_file(collection, merge=merge)
    return location


def leftovers(folder: Path) -> list[str]:
    """Files beside the snapshot, but syrupy's own lock (it locks the file under xdist)."""
    ours = {"test_niah_snapshot.ambr", "test_niah_snapshot.ambr.lock"}
    return sorted(p.name for p in folder.iterdir() if p.name not in ours)


@pytest.fixture
def old(tmp_path: Path) -> tuple[Path, bytes]:
    folder = tmp_path / "snapshots" / "model"
    path = write(folder, {"test_metric_table[a]": "'old table'", "test_other": "'kept'"})
    return path, path.read_bytes()


def test_a_write_that_fails_half_way_keeps_the_old_snapshot(old):
    path, before = old
    with pytest.raises(OSError, match="No space left"):
        write(path.parent, {"test_metric_table[a]": Exploding()})
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


@pytest.mark.parametrize("fail", ["replace", "fsync"])
def test_a_failing_rename_or_flush_keeps_the_old_snapshot(old, monkeypatch, fail):
    path, before = old

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(5, f"{fail} failed")

    monkeypatch.setattr(os, fail, broken)
    with pytest.raises(OSError, match=f"{fail} failed"):
        write(path.parent, {"test_metric_table[a]": "'new table'"})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


def test_a_write_merges_with_the_file_and_leaves_nothing_else(old):
    path, _ = old
    write(path.parent, {"test_metric_table[a]": "'new table'"})
    text = path.read_text(encoding="utf-8")
    assert "'new table'" in text and "'old table'" not in text
    assert "'kept'" in text, "merging keeps the file's other snapshots"
    assert leftovers(path.parent) == []


def test_a_temporary_file_a_killed_write_left_is_removed_by_the_next_write(old):
    path, _ = old
    stale = path.parent / f".{path.name}.niah-tmp-999999999-abcd1234"
    stale.write_text("half a snapshot", encoding="utf-8")
    write(path.parent, {"test_metric_table[a]": "'new table'"})
    assert not stale.exists()
    assert leftovers(path.parent) == []


def test_removing_a_snapshot_rewrites_the_file_atomically(old, monkeypatch):
    """syrupy's delete path (unused snapshots under --snapshot-update) also writes the file."""
    path, before = old
    extension = extension_for(path.parent)()
    monkeypatch.setattr(os, "replace", lambda *a, **k: (_ for _ in ()).throw(OSError("no")))
    with pytest.raises(OSError):
        extension.delete_snapshots(snapshot_location=str(path), snapshot_names={"test_other"})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []
    extension.delete_snapshots(snapshot_location=str(path), snapshot_names={"test_other"})
    assert "'kept'" not in path.read_text(encoding="utf-8")
    assert "'old table'" in path.read_text(encoding="utf-8")


def test_a_temporary_file_is_never_taken_for_a_snapshot_file(tmp_path: Path):
    from types import SimpleNamespace

    extension = extension_for(tmp_path)
    location = SimpleNamespace(basename="test_niah_snapshot")
    stale = tmp_path / ".test_niah_snapshot.ambr.niah-tmp-999999999-abcd1234"
    real = tmp_path / "test_niah_snapshot.ambr"
    assert extension.matches_test_location(test_location=location, snapshot_location=str(real))
    assert not extension.matches_test_location(test_location=location, snapshot_location=str(stale))
