"""Cache rows that do not hold what they claim: dropped and embedded again, never a crash.

A row of ``embeddings.sqlite`` is (space, key, dim, dtype, vector). Whatever another program,
a damaged disk or an older version put in ``dim``, ``dtype`` and ``vector``, the store either
reads the row as the float32 vector it claims to be or treats it as damaged: dropped, counted,
and its input embedded again.
"""

from __future__ import annotations

import math
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from speedless import same_results

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.store_schema import decode_vector

STATIC = "packaged-static"
DIM = 4

# Values a column may hold in SQLite: NULL, integers, reals, text, blobs.
ANY_VALUE = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=40),
)
DIMS = st.one_of(st.integers(min_value=-2, max_value=12), ANY_VALUE, st.just("abc"))
DTYPES = st.one_of(
    st.sampled_from(["float32", "float16", "float64", "<f4", "", "FLOAT32"]), ANY_VALUE
)
FLOATS = st.lists(
    st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=0, max_size=10
).map(lambda values: np.asarray(values, dtype=np.float32).tobytes())
BLOBS = st.one_of(FLOATS, ANY_VALUE)


def valid(dim: object, dtype: object, blob: object) -> bool:
    """Whether a row is exactly what a store writes: a finite float32 vector of ``dim``."""
    if type(dim) is not int or dim <= 0 or dtype != "float32" or not isinstance(blob, bytes):
        return False
    if len(blob) != dim * 4:
        return False
    return all(math.isfinite(x) for x in np.frombuffer(blob, dtype=np.float32))


@settings(max_examples=500, deadline=None)
@given(dim=DIMS, dtype=DTYPES, blob=BLOBS)
def test_decode_reads_a_row_or_calls_it_damaged(dim, dtype, blob):
    vector = decode_vector(dim, dtype, blob)  # never raises
    if valid(dim, dtype, blob):
        assert vector is not None
        assert vector.dtype == np.float32
        assert vector.tobytes() == blob
    else:
        assert vector is None


def test_decode_examples():
    good = np.arange(1, 5, dtype=np.float32).tobytes()
    assert decode_vector(4, "float32", good) is not None
    for dim, dtype, blob in [
        ("abc", "float32", good),  # the audit's case: int('abc') raised ValueError
        ("4", "float32", good),
        (4.0, "float32", good),
        (1.5, "float32", good[:4]),
        (None, "float32", good),
        (0, "float32", b""),
        (-1, "float32", good),
        (2**63 - 1, "float32", good),
        (4, "float16", good),
        (4, None, good),
        (4, b"float32", good),
        (4, "float32", good[:-1]),
        (4, "float32", "text"),
        (4, "float32", None),
        (4, "float32", np.full(4, np.nan, np.float32).tobytes()),
        (4, "float32", np.full(4, np.inf, np.float32).tobytes()),
    ]:
        assert decode_vector(dim, dtype, blob) is None, (dim, dtype, blob)


def _store_with_row(folder: Path, dim: object, dtype: object, blob: object) -> Path | None:
    path = folder / CACHE_FILE
    with EmbeddingStore(path) as store:
        store.put_many("s", ["good"], np.ones((1, DIM), np.float32))
    conn = sqlite3.connect(path)
    try:
        conn.execute("DELETE FROM vectors WHERE key = 'k'")
        conn.execute("INSERT INTO vectors VALUES ('s', 'k', ?, ?, ?)", (dim, dtype, blob))
        conn.commit()
    except sqlite3.Error:
        return None  # a NOT NULL column refuses it: no such row can exist
    finally:
        conn.close()
    return path


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dim=DIMS, dtype=DTYPES, blob=BLOBS)
def test_the_store_drops_any_undecodable_row_and_keeps_the_rest(dim, dtype, blob):
    with tempfile.TemporaryDirectory() as tmp:
        path = _store_with_row(Path(tmp), dim, dtype, blob)
        if path is None:
            return
        conn = sqlite3.connect(path)
        stored = conn.execute("SELECT dim, dtype, vector FROM vectors WHERE key = 'k'").fetchone()
        conn.close()
        with EmbeddingStore(path) as store:
            found = store.get_many("s", ["k", "good"], dim=DIM)  # never raises
            assert "good" in found
            keep = valid(*stored) and stored[0] == DIM
            assert ("k" in found) == keep
            assert store.dropped == (0 if keep else 1)
            assert store.count("s") == (2 if keep else 1)


def test_a_cache_row_with_a_dim_that_is_not_a_number_is_embedded_again(niah_run):
    """End to end: rows whose dim is text, whose dtype is another, or whose blob is cut are
    dropped and embedded again; the run passes with the clean run's results."""
    path = niah_run.path / "cache" / CACHE_FILE
    clean = niah_run.run("--niah-cache-dir=cache", "--niah-json=clean.json", model=STATIC)
    assert clean.ret == pytest.ExitCode.OK, clean.stdout.str()
    conn = sqlite3.connect(path)
    keys = conn.execute("SELECT space, key FROM vectors ORDER BY space, key").fetchall()
    damage = [
        ("UPDATE vectors SET dim = 'abc' WHERE space = ? AND key = ?", keys[0]),
        ("UPDATE vectors SET dtype = 'float16' WHERE space = ? AND key = ?", keys[1]),
        ("UPDATE vectors SET vector = substr(vector, 1, 7) WHERE space = ? AND key = ?", keys[2]),
    ]
    for sql, params in damage:
        conn.execute(sql, params)
    conn.commit()
    conn.close()
    for entry in (niah_run.path / "cache" / "results").iterdir():
        entry.unlink()  # or the results cache answers without reading a vector

    again = niah_run.run("--niah-cache-dir=cache", "--niah-json=again.json", model=STATIC)
    assert again.ret == pytest.ExitCode.OK, again.stdout.str() + again.stderr.str()
    niah_run.no_traceback(again)
    assert "; 3 unusable cache rows embedded again" in again.stdout.str()
    assert same_results(niah_run.path / "again.json", niah_run.path / "clean.json")
