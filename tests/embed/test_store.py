"""The embedding store: exact round trips, unusable rows dropped, bad files named with a fix."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from embed_fakes import FakeEmbedder, fake_vector, make_inputs, write_concurrently

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.store_schema import CACHE_SCHEMA_VERSION
from pytest_niah.errors import CacheError

NO_CACHE = "--niah-no-cache"


def keys_of(n: int, start: int = 0) -> list[str]:
    return [f"key-{i}" for i in range(start, start + n)]


@pytest.fixture
def store(tmp_path: Path):
    with EmbeddingStore(tmp_path / "cache" / CACHE_FILE) as opened:
        yield opened


def raw(path: Path) -> sqlite3.Connection:
    """A plain connection to the store's file, for writing what the store never would."""
    return sqlite3.connect(path, isolation_level=None)


# -- round trips ----------------------------------------------------------------------------


def test_round_trip_is_exact_float32(store: EmbeddingStore):
    keys = ["alpha", "beta", "ünïcödé ✓", ""]
    vectors = np.random.default_rng(0).standard_normal((4, 384)).astype(np.float32)
    vectors[0, 0] = np.float32(1e-38)  # values near the subnormal range survive too
    store.put_many("space:document", keys, vectors)
    found = store.get_many("space:document", keys, dim=384)
    assert sorted(found) == sorted(keys)
    for i, key in enumerate(keys):
        assert found[key].dtype == np.float32
        assert found[key].tobytes() == vectors[i].tobytes()
    assert store.count() == 4 and store.writes == 4 and store.dropped == 0


def test_float64_vectors_are_stored_as_float32(store: EmbeddingStore):
    vectors = np.random.default_rng(1).standard_normal((2, 8))
    store.put_many("s", ["a", "b"], vectors)
    assert np.array_equal(store.get_many("s", ["b"])["b"], vectors[1].astype(np.float32))


def test_get_many_mixes_hits_and_misses_across_lookup_chunks(store: EmbeddingStore):
    stored = keys_of(700)  # more than one lookup chunk of 500
    store.put_many("s", stored, np.stack([fake_vector(k) for k in stored]))
    query = ["missing-1", stored[3], "missing-2", stored[650], stored[3]]
    found = store.get_many("s", query)
    assert sorted(found) == sorted({stored[3], stored[650]})
    assert np.array_equal(found[stored[650]], fake_vector(stored[650]))
    assert (store.hits, store.misses, store.writes) == (2, 2, 700)  # repeats count once
    # What is returned cannot be changed under the store's feet.
    with contextlib.suppress(ValueError):  # read-only
        found[stored[3]][0] = 99.0
    assert store.get_many("s", [stored[3]])[stored[3]][0] != 99.0
    assert len(store.get_many("s", stored)) == 700


def test_key_spaces_are_separate(store: EmbeddingStore):
    store.put_many("model-a:document", ["x"], np.ones((1, 4), np.float32))
    store.put_many("model-a:query", ["x"], np.full((1, 4), 2, np.float32))
    store.put_many("model-b:document", ["x"], np.zeros((1, 4), np.float32))
    assert store.get_many("model-a:document", ["x"])["x"].tolist() == [1, 1, 1, 1]
    assert store.get_many("model-a:query", ["x"])["x"].tolist() == [2, 2, 2, 2]
    assert store.get_many("model-b:document", ["x"])["x"].tolist() == [0, 0, 0, 0]
    assert store.get_many("model-c:document", ["x"]) == {}
    assert store.count("model-a:document") == 1 and store.count() == 3


def test_insert_or_ignore_keeps_the_first_vector(store: EmbeddingStore):
    store.put_many("s", ["a"], np.ones((1, 4), np.float32))
    store.put_many("s", ["a"], np.zeros((1, 4), np.float32))
    assert store.get_many("s", ["a"])["a"].tolist() == [1, 1, 1, 1]
    assert store.count() == 1 and store.writes == 1


def test_discard_deletes_so_a_new_vector_can_be_written(store: EmbeddingStore):
    store.put_many("s", ["a", "b"], np.ones((2, 4), np.float32))
    store.discard("s", ["a", "a", "not-stored"])
    assert store.count() == 1 and store.dropped == 0  # dropped counts what reads found bad
    store.put_many("s", ["a"], np.zeros((1, 4), np.float32))
    assert store.get_many("s", ["a"])["a"].tolist() == [0, 0, 0, 0]


def test_put_many_refuses_mismatched_rows(store: EmbeddingStore):
    with pytest.raises(ValueError, match="2 keys"):
        store.put_many("s", ["a", "b"], np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="2 keys"):
        store.put_many("s", ["a", "b"], np.ones(8, np.float32))


def test_non_finite_rows_are_not_written(store: EmbeddingStore):
    rows = np.ones((3, 4), np.float32)
    rows[1, 2] = np.nan
    rows[2, 0] = np.inf
    store.put_many("s", ["fine", "nan", "inf"], rows)
    assert store.count() == 1 and sorted(store.get_many("s", ["fine", "nan", "inf"])) == ["fine"]


# -- rows that cannot be right are dropped, counted, and embedded again ---------------------


def test_rows_of_another_dimension_are_dropped_and_counted(store: EmbeddingStore):
    store.put_many("s", ["a", "b"], np.ones((2, 8), np.float32))
    store.put_many("s", ["c"], np.ones((1, 16), np.float32))
    found = store.get_many("s", ["a", "b", "c"], dim=16)
    assert sorted(found) == ["c"] and store.dropped == 2
    assert store.count("s") == 1  # deleted, so the right vectors can be written
    assert store.get_many("s", ["a"], dim=None) == {}


def test_the_encoder_embeds_dropped_rows_again(tmp_path: Path):
    items = make_inputs(40)
    path = tmp_path / CACHE_FILE
    with EmbeddingStore(path) as store:
        first = Encoder(FakeEmbedder(), store, budget=0, batch_size=10)
        first.submit(items)
        first.finish()
        space = f"{FakeEmbedder().identity.digest}:document"
        assert store.count(space) == 40
        # Rows 0-4 get another dimension; 15-19 (a later batch) too; 30-39 are missing.
        wrong = [items[i].key for i in (*range(5), *range(15, 20))]
        store.discard(space, wrong + [items[i].key for i in range(30, 40)])
        store.put_many(space, wrong, np.ones((len(wrong), 3), np.float32))
    with EmbeddingStore(path) as store:
        fake = FakeEmbedder()
        again = Encoder(fake, store, budget=0, batch_size=10)
        again.submit(items)
        table = again.finish()
        assert again.stats.dropped == 10
        assert again.stats.embedded == 20 and again.stats.read == 20
        assert sorted(fake.seen) == sorted(wrong + [items[i].key for i in range(30, 40)])
        expected = np.stack([fake_vector(item.key) for item in items])
        assert np.array_equal(table.matrix[table.rows([i.key for i in items])], expected)
        found = store.get_many(space, [i.key for i in items], dim=16)
        assert len(found) == 40 and store.dropped == 0


def test_a_warm_store_with_some_rows_of_another_dimension_is_mended(tmp_path: Path):
    """Every input cached, some wrongly: the model is asked for the dimension, not fooled."""
    items = make_inputs(12)
    path = tmp_path / CACHE_FILE
    space = f"{FakeEmbedder().identity.digest}:document"
    with EmbeddingStore(path) as store:
        store.put_many(space, [i.key for i in items[:3]], np.ones((3, 5), np.float32))
        store.put_many(
            space, [i.key for i in items[3:]], np.stack([fake_vector(i.key) for i in items[3:]])
        )
        fake = FakeEmbedder()
        encoder = Encoder(fake, store, budget=0, batch_size=100)
        encoder.submit(items)
        table = encoder.finish()
        assert table.matrix.shape == (12, 16)
        expected = np.stack([fake_vector(item.key) for item in items])
        assert np.array_equal(table.matrix[table.rows([i.key for i in items])], expected)
        assert encoder.stats.dropped == 3 and encoder.stats.read == 9
        assert sorted(fake.seen) == sorted(i.key for i in items[:3])
        assert len(store.get_many(space, [i.key for i in items], dim=16)) == 12


def test_a_nan_row_written_into_the_file_is_dropped(store: EmbeddingStore):
    store.put_many("s", ["good", "bad"], np.ones((2, 4), np.float32))
    with raw(store.path) as conn:
        conn.execute(
            "UPDATE vectors SET vector = ? WHERE key = 'bad'",
            (np.array([1, np.nan, 1, 1], np.float32).tobytes(),),
        )
    found = store.get_many("s", ["good", "bad"])
    assert sorted(found) == ["good"] and store.dropped == 1 and store.count() == 1


@pytest.mark.parametrize(
    ("dim", "dtype", "blob"),
    [
        (4, "float32", np.ones(3, np.float32).tobytes()),  # shorter than it claims
        (4, "float16", np.ones(4, np.float32).tobytes()),  # another dtype
        (0, "float32", b""),
        (4, "float32", "text, not bytes"),
    ],
    ids=["short-blob", "dtype", "empty", "text"],
)
def test_rows_that_do_not_hold_what_they_claim_are_dropped(store, dim, dtype, blob):
    with raw(store.path) as conn:
        conn.execute("INSERT INTO vectors VALUES ('s', 'k', ?, ?, ?)", (dim, dtype, blob))
    assert store.get_many("s", ["k"]) == {} and store.dropped == 1 and store.count() == 0


# -- the file -------------------------------------------------------------------------------


def test_schema_and_pragmas(tmp_path: Path):
    path = tmp_path / CACHE_FILE
    EmbeddingStore(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM niah_schema").fetchall() == [
            (CACHE_SCHEMA_VERSION,)
        ]
        columns = [r[1] for r in conn.execute("PRAGMA table_info(vectors)")]
        assert columns == ["space", "key", "dim", "dtype", "vector"]
    finally:
        conn.close()


def test_an_older_schema_is_reset_not_an_error(tmp_path: Path):
    """A cache of pytest-niah 0.x (schema 1: an ``embeddings`` table) only held embeddings."""
    path = tmp_path / CACHE_FILE
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE niah_schema (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO niah_schema VALUES (1)")
    conn.execute(
        "CREATE TABLE embeddings (fingerprint TEXT, text_sha256 TEXT, dim INTEGER, dtype TEXT, "
        "vector BLOB, PRIMARY KEY (fingerprint, text_sha256))"
    )
    conn.execute("INSERT INTO embeddings VALUES ('fp', 'k', 4, 'float32', x'00')")
    conn.commit()
    conn.close()
    with EmbeddingStore(path) as store:
        assert store.count() == 0
        store.put_many("s", ["k"], np.ones((1, 4), np.float32))
        tables = {
            r[0] for r in store.connection.execute("SELECT name FROM sqlite_master").fetchall()
        }
        assert "embeddings" not in tables
        version = store.connection.execute("SELECT version FROM niah_schema").fetchall()
        assert version == [(CACHE_SCHEMA_VERSION,)]
    with EmbeddingStore(path) as store:  # and the new layout is kept from then on
        assert store.count() == 1


def test_a_newer_schema_is_refused_and_kept(tmp_path: Path):
    """A newer pytest-niah's cache is not ours to wipe: refuse, name both versions, keep it."""
    path = tmp_path / CACHE_FILE
    with EmbeddingStore(path) as store:
        store.put_many("s", ["k"], np.ones((1, 4), np.float32))
        store.connection.execute("UPDATE niah_schema SET version = ?", (CACHE_SCHEMA_VERSION + 97,))
    with pytest.raises(CacheError) as info:
        EmbeddingStore(path)
    message = str(info.value)
    assert f"schema version {CACHE_SCHEMA_VERSION + 97}" in message
    assert f"reads version {CACHE_SCHEMA_VERSION}" in message and "--niah-cache-dir" in message
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_closed_store_says_so(tmp_path: Path):
    store = EmbeddingStore(tmp_path / CACHE_FILE)
    store.close()
    store.close()
    with pytest.raises(CacheError, match="closed"):
        store.count()


def test_a_file_of_garbage_is_a_cache_error_naming_the_file(tmp_path: Path):
    path = tmp_path / CACHE_FILE
    path.write_bytes(np.random.default_rng(7).bytes(8192))
    with pytest.raises(CacheError) as info:
        EmbeddingStore(path)
    message = str(info.value)
    assert str(path) in message and "is not a valid SQLite cache" in message
    assert "Fix: delete that file" in message and NO_CACHE in message


def test_a_damaged_database_is_a_cache_error(tmp_path: Path):
    path = tmp_path / CACHE_FILE
    with EmbeddingStore(path) as store:
        keys = keys_of(2000)
        store.put_many("s", keys, np.stack([fake_vector(k, 64) for k in keys]))
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[2 * page : len(data) - page] = np.random.default_rng(3).bytes(len(data) - 3 * page)
    path.write_bytes(bytes(data))
    with pytest.raises(CacheError) as info, EmbeddingStore(path) as store:
        store.get_many("s", keys)
    assert str(path) in str(info.value) and "delete that file" in str(info.value)


def test_a_folder_where_the_file_goes_is_a_cache_error(tmp_path: Path):
    path = tmp_path / CACHE_FILE
    path.mkdir()
    with pytest.raises(CacheError) as info:
        EmbeddingStore(path)
    message = str(info.value)
    assert str(path) in message and "is a folder" in message
    assert "--niah-cache-dir" in message and NO_CACHE in message


def test_an_unwritable_folder_is_a_cache_error(tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            # Root ignores permissions: a path under a regular file fails for everyone.
            (tmp_path / "afile").write_text("not a folder")
            path = tmp_path / "afile" / CACHE_FILE
        else:
            path = locked / CACHE_FILE
        with pytest.raises(CacheError) as info:
            EmbeddingStore(path)
        message = str(info.value)
        assert str(path.parent) in message and "--niah-cache-dir" in message
    finally:
        locked.chmod(0o700)


# -- two processes ------------------------------------------------------------------------


def test_two_processes_writing_the_same_keys_do_not_conflict(tmp_path: Path):
    path = tmp_path / "shared" / CACHE_FILE  # created by whichever comes first
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(2)
        with ctx.Pool(2) as pool:
            results = [
                pool.apply_async(write_concurrently, (str(path), start, barrier))
                for start in (0, 300)
            ]
            embedded = [r.get(timeout=120) for r in results]
    # 300 inputs are shared: each is embedded by one process or both, never lost.
    assert all(e <= 600 for e in embedded) and sum(embedded) >= 900
    items = make_inputs(900)
    space = f"{FakeEmbedder().identity.digest}:document"
    with EmbeddingStore(path) as store:
        assert store.count() == store.count(space) == 900
        found = store.get_many(space, [i.key for i in items], dim=16)
        assert len(found) == 900 and store.dropped == 0
        assert all(np.array_equal(found[i.key], fake_vector(i.key)) for i in items)
        assert store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
