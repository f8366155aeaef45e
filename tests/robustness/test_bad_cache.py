"""Bad caches, end to end through pytest: a clear stop naming the file, or a correct run.

The embedding cache (``DIR/embeddings.sqlite``, an :class:`EmbeddingStore`) is opened when
the experiment starts, before the model is loaded. A file that is not ours to repair -- not
a database, damaged pages, a newer pytest-niah's schema, a folder in its place -- stops the
session once (exit code 4) with a message naming the path and the fix, and is left exactly
as it was. What can be repaired is: an older schema is reset, rows of another dimension and
NaN rows are dropped and embedded again, and the run's results equal a clean run's byte for
byte. The finished-results cache (``DIR/results/<key>.json``) and the sentence token counts
(``DIR/sentence-counts/``) are only shortcuts: a damaged entry is recomputed, an unusable
folder costs a warning.

The units (each error of :class:`EmbeddingStore`, the encoder's re-embedding) are tested in
tests/embed/test_store.py and tests/embed/test_runner.py; here the whole plugin runs, on the
tiny grid, with ``packaged-static`` (a model whose embeddings are stored; lexical ones are
not) unless the case is about the results cache alone.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from speedless import same_results

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.store_schema import CACHE_SCHEMA_VERSION

STATIC = "packaged-static"
NO_CACHE_FIX = "or run without the cache (--niah-no-cache)"
DELETE_FIX = (
    "Fix: delete that file (it only holds embeddings, which are recomputed), " + NO_CACHE_FIX
)
EMBEDDED = re.compile(
    r"^(?P<embedded>\d+) texts embedded, (?P<read>\d+) read from the cache \(cache (?P<cache>.+?)\)"
    r"(?:; (?P<dropped>\d+) unusable cache rows embedded again)?$",
    re.MULTILINE,
)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def embedding_stats(result: pytest.RunResult) -> dict[str, int]:
    """The summary's "N texts embedded, M read from the cache; K unusable ..." line."""
    match = EMBEDDED.search(result.stdout.str())
    assert match is not None, result.stdout.str()
    return {k: int(match.group(k) or 0) for k in ("embedded", "read", "dropped")}


def vectors(path: Path) -> dict[tuple[str, str], tuple[int, bytes]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT space, key, dim, vector FROM vectors").fetchall()
    finally:
        conn.close()
    return {(space, key): (dim, blob) for space, key, dim, blob in rows}


# --------------------------------------------------------------------------- files not ours


def garbage_cache(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CACHE_FILE
    path.write_bytes(random.Random(3).randbytes(40_000))
    return path


def damaged_cache(folder: Path) -> Path:
    """A real cache whose middle pages were overwritten: a valid header, broken b-tree."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CACHE_FILE
    with EmbeddingStore(path) as store:
        rows = np.random.default_rng(0).standard_normal((3000, 384))
        store.put_many("fp:document", [f"text {i}" for i in range(3000)], rows)
    data = bytearray(path.read_bytes())
    noise = random.Random(5).randbytes(8192)
    data[4096 * 5 : 4096 * 5 + len(noise)] = noise
    path.write_bytes(bytes(data))
    return path


def future_cache(folder: Path) -> Path:
    """A cache written by a later pytest-niah (schema version 99), holding one vector."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CACHE_FILE
    with EmbeddingStore(path) as store:
        store.put_many("fp:document", ["k"], np.ones((1, 4), np.float32))
        store.connection.execute("UPDATE niah_schema SET version = 99")
    return path


BAD_FILES = {
    "garbage": (garbage_cache, "is not a valid SQLite cache (file is not a database)", DELETE_FIX),
    "damaged-pages": (damaged_cache, "is damaged (quick_check:", DELETE_FIX),
    "future-schema": (
        future_cache,
        f"has schema version 99, written by a newer pytest-niah (this one reads version "
        f"{CACHE_SCHEMA_VERSION})",
        "Fix: upgrade pytest-niah, or give this version its own cache (--niah-cache-dir or "
        "NIAH_CACHE_DIR), " + NO_CACHE_FIX,
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_cache_file_stops_the_run_and_is_kept(niah_run, case):
    make, problem, fix = BAD_FILES[case]
    path = make(niah_run.path / "cache")
    before = digest(path)
    result = niah_run.run("--niah-cache-dir=cache", model=STATIC)
    niah_run.assert_stopped(result, STATIC, f"the embedding cache {path} {problem}", fix)
    assert digest(path) == before, "a cache file that is not ours was changed"


def test_a_newer_schema_keeps_its_rows(niah_run):
    path = future_cache(niah_run.path / "cache")
    niah_run.assert_stopped(niah_run.run("--niah-cache-dir=cache", model=STATIC), STATIC)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT version FROM niah_schema").fetchall() == [(99,)]
        assert conn.execute("SELECT count(*) FROM vectors").fetchone() == (1,)
    finally:
        conn.close()


def test_cache_file_that_is_a_folder_is_named(niah_run):
    path = niah_run.path / "cache" / CACHE_FILE
    (path / "inside").mkdir(parents=True)
    result = niah_run.run("--niah-cache-dir=cache", model=STATIC)
    niah_run.assert_stopped(
        result,
        STATIC,
        f"the embedding cache {path} is a folder (or another non-file) where the database "
        "file goes",
        "Fix: remove or move it, point the cache elsewhere (--niah-cache-dir or NIAH_CACHE_DIR)",
        NO_CACHE_FIX,
    )
    assert (path / "inside").is_dir()


def test_both_fixes_of_a_garbage_cache_work(niah_run):
    path = garbage_cache(niah_run.path / "cache")
    before = digest(path)
    result = niah_run.run("--niah-cache-dir=cache", "--niah-no-cache", model=STATIC)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert digest(path) == before, "--niah-no-cache touched the cache"
    assert not (niah_run.path / "cache" / "results").exists()
    path.unlink()
    result = niah_run.run("--niah-cache-dir=cache", model=STATIC)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    stats = embedding_stats(result)
    assert stats["embedded"] > 0 and stats["read"] == 0
    with EmbeddingStore(path) as store:
        assert store.count() == stats["embedded"]


# --------------------------------------------------------------------------- folders


def test_cache_dir_under_a_regular_file(niah_run):
    (niah_run.path / "a-file").write_text("not a folder\n")
    result = niah_run.run("--niah-cache-dir=a-file/cache", model=STATIC)
    niah_run.assert_stopped(
        result,
        STATIC,
        f"the embedding cache folder {niah_run.path / 'a-file' / 'cache'} cannot be created",
        "Fix: make it writable, point the cache elsewhere (--niah-cache-dir or NIAH_CACHE_DIR)",
        NO_CACHE_FIX,
    )


def test_cache_dir_is_a_regular_file(niah_run):
    (niah_run.path / "a-file").write_text("not a folder\n")
    result = niah_run.run("--niah-cache-dir=a-file", model=STATIC)
    niah_run.assert_stopped(
        result,
        STATIC,
        f"the embedding cache folder {niah_run.path / 'a-file'} cannot be created",
        "(a file is in the way)",
        "--niah-cache-dir",
    )
    assert (niah_run.path / "a-file").read_text() == "not a folder\n"


def test_cache_dir_from_the_environment_is_named(niah_run, monkeypatch):
    (niah_run.path / "a-file").write_text("not a folder\n")
    monkeypatch.setenv("NIAH_CACHE_DIR", str(niah_run.path / "a-file" / "sub"))
    result = niah_run.run(model=STATIC)
    niah_run.assert_stopped(
        result,
        STATIC,
        f"the embedding cache folder {niah_run.path / 'a-file' / 'sub'} cannot be created",
        "NIAH_CACHE_DIR",
    )


def test_a_model_without_an_embedding_cache_only_warns(niah_run):
    """The lexical baseline stores no embeddings: a cache folder in the way costs only the
    results shortcut, and a warning names it."""
    (niah_run.path / "a-file").write_text("not a folder\n")
    # In a fresh interpreter: the warning is issued before the first test, outside pytest's
    # warning capture, so an in-process run would hand it to this test's own session.
    result = niah_run.run("--niah-cache-dir=a-file", subprocess=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=1, xfailed=4)
    out = result.stdout.str() + result.stderr.str()
    assert (
        f"NiahCacheWarning: pytest-niah: the results cache {niah_run.path / 'a-file' / 'results'}"
        " cannot store this run (Not a directory), so a re-run will compute it again. Fix: make "
        "it writable, or point the cache elsewhere (--niah-cache-dir or NIAH_CACHE_DIR)"
    ) in out
    niah_run.no_traceback(result)


# --------------------------------------------------------------------------- repaired


def test_an_empty_cache_file_is_a_fresh_cache(niah_run):
    """A zero-byte file (e.g. ``touch``ed, or a disk that filled at creation) is an empty
    database to SQLite: the run fills it."""
    path = niah_run.path / "cache" / CACHE_FILE
    path.parent.mkdir()
    path.write_bytes(b"")
    result = niah_run.run("--niah-cache-dir=cache", model=STATIC)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    with EmbeddingStore(path) as store:
        assert store.count() == embedding_stats(result)["embedded"] > 0


def test_an_older_schema_is_reset_and_refilled(niah_run):
    """A cache of pytest-niah 0.x (schema 1, an ``embeddings`` table) is started afresh."""
    path = niah_run.path / "cache" / CACHE_FILE
    path.parent.mkdir()
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
    result = niah_run.run("--niah-cache-dir=cache", model=STATIC)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    niah_run.no_traceback(result)
    stats = embedding_stats(result)
    assert stats["read"] == 0 and stats["embedded"] > 0
    conn = sqlite3.connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"niah_schema", "vectors"}
        assert conn.execute("SELECT version FROM niah_schema").fetchall() == [
            (CACHE_SCHEMA_VERSION,)
        ]
        assert conn.execute("SELECT count(*) FROM vectors").fetchone() == (stats["embedded"],)
    finally:
        conn.close()


def test_bad_rows_are_embedded_again_and_the_results_are_unchanged(niah_run):
    """Rows of another dimension and NaN rows (a damaged or foreign write) are dropped and
    embedded again; the summary counts them; the results equal the clean run's exactly."""
    path = niah_run.path / "cache" / CACHE_FILE
    clean = niah_run.run("--niah-cache-dir=cache", "--niah-json=clean.json", model=STATIC)
    assert clean.ret == pytest.ExitCode.OK, clean.stdout.str()
    good = vectors(path)
    total = embedding_stats(clean)["embedded"]
    assert len(good) == total >= 20
    # Damage every fourth row: alternately NaN values and a vector of another dimension.
    damaged = sorted(good)[::4]
    conn = sqlite3.connect(path)
    for i, (space, key) in enumerate(damaged):
        dim = good[space, key][0]
        wrong = np.full(dim, np.nan, np.float32) if i % 2 else np.ones(dim // 2, np.float32)
        conn.execute(
            "UPDATE vectors SET dim = ?, vector = ? WHERE space = ? AND key = ?",
            (wrong.shape[0], wrong.tobytes(), space, key),
        )
    conn.commit()
    conn.close()
    for entry in (niah_run.path / "cache" / "results").iterdir():
        entry.unlink()  # or the results cache answers without reading a vector

    again = niah_run.run("--niah-cache-dir=cache", "--niah-json=again.json", model=STATIC)
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    niah_run.no_traceback(again)
    # A batch holding a damaged row is embedded again whole (#42.6); a damaged row whose
    # batch is embedded whole anyway need not be read to be replaced.
    stats = embedding_stats(again)
    assert stats["embedded"] + stats["read"] == total
    assert 0 < stats["dropped"] <= len(damaged) <= stats["embedded"]
    assert f"; {stats['dropped']} unusable cache rows embedded again" in again.stdout.str()
    assert same_results(niah_run.path / "again.json", niah_run.path / "clean.json")
    assert vectors(path) == good, "the cache was not mended"


def test_a_torn_write_ahead_log_is_ignored(niah_run):
    """A killed run can leave a half-written -wal file: SQLite ignores frames whose checksum
    fails, so the committed rows are read and the run passes."""
    path = niah_run.path / "cache" / CACHE_FILE
    first = niah_run.run("--niah-cache-dir=cache", "--niah-json=first.json", model=STATIC)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    total = embedding_stats(first)["embedded"]
    wal = path.with_name(CACHE_FILE + "-wal")
    wal.write_bytes(b"\x37\x7f\x06\x82" + random.Random(9).randbytes(10_000))
    for entry in (niah_run.path / "cache" / "results").iterdir():
        entry.unlink()
    again = niah_run.run("--niah-cache-dir=cache", "--niah-json=again.json", model=STATIC)
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    assert embedding_stats(again) == {"embedded": 0, "read": total, "dropped": 0}
    assert same_results(niah_run.path / "again.json", niah_run.path / "first.json")


# --------------------------------------------------------------------------- results cache
# Finished results are kept beside the embedding cache (DIR/results/<key>.json); a damaged
# entry must be recomputed, an unusable folder must be named.


def results_entry(niah_run) -> Path:
    """Run once so that the results cache holds this grid's entry; return that file."""
    result = niah_run.run("--niah-cache-dir=cache", "--niah-json=first.json")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    (entry,) = (niah_run.path / "cache" / "results").glob("*.json")
    return entry


@pytest.mark.parametrize(
    "content",
    [
        b'{"schema_version": 2, "cases": [',
        b"[]",
        b'{"schema_version": 2}',
        b"\xff\xfe\x00garbage",
        b"",
    ],
    ids=["truncated", "array", "incomplete", "binary", "empty"],
)
def test_damaged_results_entry_is_recomputed(niah_run, content):
    entry = results_entry(niah_run)
    entry.write_bytes(content)
    result = niah_run.run("--niah-cache-dir=cache", "--niah-json=again.json")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    niah_run.no_traceback(result)
    assert "results reused" not in result.stdout.str()
    assert same_results(entry, niah_run.path / "first.json"), "not replaced"
    assert same_results(niah_run.path / "again.json", niah_run.path / "first.json")


def test_results_entry_with_a_bad_config_is_recomputed(niah_run):
    entry = results_entry(niah_run)
    data = json.loads(entry.read_text())
    data["config"]["lengths"] = "abc"
    entry.write_text(json.dumps(data))
    result = niah_run.run("--niah-cache-dir=cache")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "results reused" not in result.stdout.str()
    assert same_results(entry, niah_run.path / "first.json")


def test_an_intact_results_entry_is_reused(niah_run):
    """The control of the tests above: an untouched entry answers the run."""
    entry = results_entry(niah_run)
    result = niah_run.run("--niah-cache-dir=cache")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    out = result.stdout.str()
    assert f"results reused from an identical earlier run ({entry}): checked " in out
    assert "0 texts embedded, 0 read from the cache" in out


def test_a_foreign_results_entry_is_not_reused(niah_run):
    """An entry holding another grid's results (a copied cache, a stale file) is recomputed."""
    entry = results_entry(niah_run)  # positions 2
    result = niah_run.run("--niah-cache-dir=cache", "--niah-positions=3")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    (other,) = set((niah_run.path / "cache" / "results").glob("*.json")) - {entry}
    other.write_bytes(entry.read_bytes())  # this grid's key now holds the 2-position results
    result = niah_run.run("--niah-cache-dir=cache", "--niah-positions=3", "--niah-json=p3.json")
    niah_run.no_traceback(result)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert json.loads((niah_run.path / "p3.json").read_text())["config"]["positions"] == 3


def test_results_folder_in_the_way_is_named(niah_run):
    """Only the shortcut is lost: the run passes and a warning names the folder and the fix."""
    (niah_run.path / "cache").mkdir()
    (niah_run.path / "cache" / "results").write_text("a file where the results folder goes\n")
    result = niah_run.run("--niah-cache-dir=cache", subprocess=True)  # see above
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    out = result.stdout.str() + result.stderr.str()
    assert "NiahCacheWarning" in out
    assert f"the results cache {niah_run.path / 'cache' / 'results'} cannot store this run" in out
    assert "Fix: make it writable, or point the cache elsewhere" in out
    niah_run.no_traceback(result)
    assert (niah_run.path / "cache" / "results").read_text().startswith("a file where")


# --------------------------------------------------------------------------- token counts
# Sentence token counts are kept per tokenizer and corpus (DIR/sentence-counts/*.npz); a
# damaged file only costs counting again, and the haystacks (so the results) stay the same.


def damage_counts(path: Path, damage: str) -> None:
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flipped-byte":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    elif damage == "garbage":
        path.write_bytes(random.Random(11).randbytes(len(data)))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "negative-counts":
        with np.load(path) as stored:
            arrays = [stored[f"arr_{i}"] for i in range(len(stored.files) - 1)]
        with path.open("wb") as out:
            np.savez(out, *[np.full_like(a, -7) for a in arrays], format=np.array(1))
    else:
        raise ValueError(damage)


@pytest.mark.parametrize(
    "damage", ["truncated", "flipped-byte", "garbage", "empty", "negative-counts"]
)
def test_a_damaged_token_counts_file_is_counted_again(niah_run, damage):
    first = niah_run.run("--niah-cache-dir=cache", "--niah-json=first.json")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    (counts,) = (niah_run.path / "cache" / "sentence-counts").glob("*.npz")
    damage_counts(counts, damage)
    for entry in (niah_run.path / "cache" / "results").iterdir():
        entry.unlink()
    again = niah_run.run("--niah-cache-dir=cache", "--niah-json=again.json")
    niah_run.no_traceback(again)
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    assert same_results(niah_run.path / "again.json", niah_run.path / "first.json")
    with np.load(counts) as stored:  # written again, whole
        assert int(stored["format"]) == 1 and int(stored["arr_0"].min()) >= -1
