"""Rules of embed/identity.py that mutants found unchecked, beside test_identity*.py."""

from __future__ import annotations

import os
import sqlite3
from types import SimpleNamespace

import pytest

from pytest_niah.embed import file_hashes
from pytest_niah.embed.file_hashes import MEMO_FILE, MEMO_TABLE
from pytest_niah.embed.identity import model_identity
from pytest_niah.embed.model_files import file_digests, named_hidden_paths


def test_an_identity_is_the_same_as_the_last_release_gave_so_caches_carry_over():
    # Found (mutation, identity.py:41 EMBEDDING_SCHEMA 2 -> 3): the identity keys every
    # cache, so any change of how it is made (its schema number included) drops every
    # user's embedding cache. This digest changes only with a deliberate schema bump.
    identity = model_identity(
        {"kind": "files", "files": {"config.json": "ab" * 32}},
        {"device": "cpu", "dtype": "float32"},
        versions=False,
    )
    assert identity.parts["schema"] == 2
    assert identity.digest == "66ce32b7641f4ab7ae8b2a9fb32e74f435431cfd35275c22cea9a9189cf83a90"
    assert identity.short == identity.digest[:12]


def test_a_files_hash_is_memoised_only_once_it_is_more_than_two_seconds_old(tmp_path, monkeypatch):
    # Found (mutation, identity.py:54 _SETTLED_NS + 1, and :317-318 the age's bounds): a
    # file changed within the file system's coarsest stamp (2 s, FAT's) may change again
    # keeping its size and mtime, so its hash is kept only once it is older than that,
    # counted from its last change (the later of mtime and the inode change time).
    folder = tmp_path / "model"
    folder.mkdir()
    weights = folder / "weights.bin"
    weights.write_bytes(b"\1" * 64)
    os.utime(weights, ns=(10**9, 10**9))  # an old mtime: the inode change time is now
    stat = weights.stat()
    changed = max(stat.st_mtime_ns, stat.st_ctime_ns)
    memo = tmp_path / "memo"

    def kept_after(age_ns: int) -> int:
        monkeypatch.setattr(file_hashes, "time", SimpleNamespace(time_ns=lambda: changed + age_ns))
        file_digests(folder, memo)
        with sqlite3.connect(memo / MEMO_FILE) as db:
            return int(db.execute(f"SELECT COUNT(*) FROM {MEMO_TABLE}").fetchone()[0])

    assert kept_after(2_000_000_000) == 0  # exactly 2 s: not yet settled
    assert kept_after(2_000_000_001) == 1


@pytest.mark.parametrize(("size", "read"), [(1_048_576, True), (1_048_577, False)])
def test_a_json_file_of_up_to_one_mib_is_read_for_the_hidden_files_it_names(tmp_path, size, read):
    # Found (mutation, identity.py:48 MAX_CONFIG_BYTES 1 << 20 -> 2 << 20 or 1 << 21): the
    # limit is one MiB, whatever the constant's name (test_identity_edges reads it from it).
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / ".extra").write_text("hidden", encoding="utf-8")
    text = '{"path": ".extra", "pad": ""}'
    (folder / "config.json").write_text(
        text[:-2] + " " * (size - len(text)) + '"}', encoding="utf-8"
    )
    assert (folder / "config.json").stat().st_size == size
    assert (".extra" in file_digests(folder)) is read


def test_a_hidden_path_a_config_names_counts_only_where_it_exists(tmp_path):
    # Found (mutation, identity.py:244 `target.exists()` dropped): a config string that
    # names a hidden file the folder does not hold adds nothing.
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / ".there").write_text("hidden", encoding="utf-8")
    (folder / "config.json").write_text('{"a": ".missing", "b": ".there"}', encoding="utf-8")
    assert named_hidden_paths(folder) == {folder / ".there"}
