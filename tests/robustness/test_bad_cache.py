"""Bad embedding caches: a message naming the cache file or folder and the fix, no traceback.

The cache is opened when the experiment starts (before the model is loaded); a damaged file
or an unusable folder fails every test with one message, and the fixes it names work.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.embed.cache import CacheError, EmbeddingCache

MINILM = "packaged-minilm"
NO_CACHE_FIX = "or run without the cache (--niah-no-cache)"


def garbage_cache(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "embeddings.sqlite"
    path.write_bytes(random.Random(3).randbytes(40_000))
    return path


def damaged_cache(folder: Path) -> Path:
    """A real cache whose middle pages were overwritten: a valid header, broken b-tree."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "embeddings.sqlite"
    with EmbeddingCache(path) as cache:
        rows = np.random.default_rng(0).standard_normal((3000, 384))
        cache.put_many("fp:document", [f"text {i}" for i in range(3000)], rows)
    data = bytearray(path.read_bytes())
    noise = random.Random(5).randbytes(8192)
    data[4096 * 5 : 4096 * 5 + len(noise)] = noise
    path.write_bytes(bytes(data))
    return path


def future_cache(folder: Path) -> Path:
    """A cache written by a later pytest-niah (schema version 99)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "embeddings.sqlite"
    EmbeddingCache(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE niah_schema SET version = 99")
    conn.close()
    return path


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (garbage_cache, "is not a valid SQLite cache"),
        (damaged_cache, "is damaged"),
        (future_cache, "has schema version 99"),
    ],
    ids=["garbage", "damaged-pages", "future-schema"],
)
def test_bad_cache_file(niah_run, make, problem):
    path = make(niah_run.path / "cache")
    result = niah_run.run("--niah-cache-dir=cache", model=MINILM)
    niah_run.assert_run_error(
        result,
        f"pytest-niah could not run '{MINILM}'",
        f"the embedding cache {path} {problem}",
        "Fix: delete that file",
        NO_CACHE_FIX,
    )


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (garbage_cache, "is not a valid SQLite cache"),
        (damaged_cache, "is damaged"),
        (future_cache, "has schema version 99"),
    ],
    ids=["garbage", "damaged-pages", "future-schema"],
)
def test_bad_cache_file_through_the_api(tmp_path, make, problem):
    path = make(tmp_path / "cache")
    with pytest.raises(CacheError) as info:
        EmbeddingCache(path)
    assert f"the embedding cache {path} {problem}" in str(info.value)
    assert "Fix: delete that file" in str(info.value)


def test_both_fixes_of_a_garbage_cache_work(niah_run):
    path = garbage_cache(niah_run.path / "cache")
    result = niah_run.run("--niah-cache-dir=cache", "--niah-no-cache", model=MINILM)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert path.read_bytes()[:16] != b"SQLite format 3\0", "--niah-no-cache left the file alone"
    path.unlink()
    result = niah_run.run("--niah-cache-dir=cache", model=MINILM)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    with EmbeddingCache(path) as cache:
        assert cache.count() > 0


def test_cache_dir_under_a_regular_file(niah_run):
    (niah_run.path / "a-file").write_text("not a folder\n")
    result = niah_run.run("--niah-cache-dir=a-file/cache", model=MINILM)
    niah_run.assert_run_error(
        result,
        f"the embedding cache folder {niah_run.path / 'a-file' / 'cache'} cannot be created",
        "Fix: make it writable, point the cache elsewhere (--niah-cache-dir or NIAH_CACHE_DIR)",
        NO_CACHE_FIX,
    )


def test_cache_dir_is_a_regular_file(niah_run):
    (niah_run.path / "a-file").write_text("not a folder\n")
    result = niah_run.run("--niah-cache-dir=a-file")
    niah_run.assert_run_error(
        result,
        f"the embedding cache folder {niah_run.path / 'a-file'} cannot be created",
        "(a file is in the way)",
        "--niah-cache-dir",
    )


def test_cache_dir_from_the_environment_is_named(niah_run, monkeypatch):
    (niah_run.path / "a-file").write_text("not a folder\n")
    monkeypatch.setenv("NIAH_CACHE_DIR", str(niah_run.path / "a-file" / "sub"))
    result = niah_run.run(model=MINILM)
    niah_run.assert_run_error(
        result, f"the embedding cache folder {niah_run.path / 'a-file' / 'sub'} cannot be created"
    )


def test_unwritable_cache_dir_through_the_api(tmp_path):
    (tmp_path / "a-file").write_text("not a folder\n")
    with pytest.raises(CacheError) as info:
        EmbeddingCache(tmp_path / "a-file" / "cache" / "embeddings.sqlite")
    assert f"{tmp_path / 'a-file' / 'cache'} cannot be created" in str(info.value)
    assert "NIAH_CACHE_DIR" in str(info.value)


def test_cache_file_that_is_a_folder_is_named(niah_run):
    path = niah_run.path / "cache" / "embeddings.sqlite"
    path.mkdir(parents=True)
    result = niah_run.run("--niah-cache-dir=cache")
    niah_run.assert_run_error(result, str(path), "Fix:")


def test_bad_cache_under_xdist(niah_run):
    """Every worker reports the same message; none shows a traceback."""
    path = garbage_cache(niah_run.path / "cache")
    result = niah_run.run("--niah-cache-dir=cache", "-n", "2", model=MINILM, subprocess=True)
    niah_run.assert_run_error(result, f"the embedding cache {path} is not a valid SQLite cache")


# --------------------------------------------------------------------------- results cache
# Finished results are kept beside the embedding cache (DIR/results/<key>.json); a damaged
# entry must be recomputed, an unusable folder must be named.


def results_entry(niah_run) -> Path:
    """Run once so that the results cache holds this grid's entry; return that file."""
    result = niah_run.run("--niah-cache-dir=cache")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    (entry,) = (niah_run.path / "cache" / "results").glob("*.json")
    return entry


@pytest.mark.parametrize(
    "content",
    [b'{"schema_version": 1, "cases": [', b"[]", b'{"schema_version": 1}'],
    ids=["truncated", "array", "incomplete"],
)
def test_damaged_results_entry_is_recomputed(niah_run, content):
    entry = results_entry(niah_run)
    entry.write_bytes(content)
    result = niah_run.run("--niah-cache-dir=cache")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    niah_run.no_traceback(result)
    assert entry.read_bytes() != content


def test_binary_results_entry_is_recomputed(niah_run):
    entry = results_entry(niah_run)
    entry.write_bytes(b"\xff\xfe\x00garbage")
    result = niah_run.run("--niah-cache-dir=cache")
    niah_run.no_traceback(result)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


def test_results_entry_with_a_bad_config_is_recomputed(niah_run):
    entry = results_entry(niah_run)
    data = json.loads(entry.read_text())
    data["config"]["lengths"] = "abc"
    entry.write_text(json.dumps(data))
    result = niah_run.run("--niah-cache-dir=cache")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


def test_results_folder_in_the_way_is_named(niah_run):
    """Only the shortcut is lost: the run passes and a warning names the folder and the fix."""
    (niah_run.path / "cache").mkdir()
    (niah_run.path / "cache" / "results").write_text("a file where the results folder goes\n")
    result = niah_run.run("--niah-cache-dir=cache")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    out = result.stdout.str()
    assert "NiahCacheWarning" in out
    assert f"the results cache {niah_run.path / 'cache' / 'results'} cannot store this run" in out
    assert "Fix:" in out
    niah_run.no_traceback(result)


def test_binary_results_file_through_the_api(tmp_path):
    from pytest_niah.errors import ResultsError
    from pytest_niah.results.niah_results import NiahResults

    path = tmp_path / "results.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ResultsError, match=r"results\.json"):
        NiahResults.load(path)
