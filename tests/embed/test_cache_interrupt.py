"""Kill a caching run at random points: the cache must stay intact and resume exactly."""

from __future__ import annotations

import functools
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_niah.embed.cache import EmbeddingCache, text_key

TOTAL = 4000
CHUNK = 16
DIM = 384
SLEEP = 0.004  # per chunk: the fake model's "forward pass"
KILLS = 20
KILL_DELAYS = (0.0, 0.08)  # seconds after the model's first call
FINGERPRINT = "slow-fake"
KEY = f"{FINGERPRINT}:document"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# Shared by the child script and this module, so both compute the same vectors.
FAKE_SOURCE = textwrap.dedent(
    """
    import hashlib
    import time

    import numpy as np


    def make_texts(n):
        return [f"text {i}: " + "filler words " * (i % 13) for i in range(n)]


    def fake_vector(text, dim):
        digest = hashlib.sha256(text.encode()).digest()
        seed = int.from_bytes(digest[:8], "little")
        return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


    class SlowFake:
        name = "slow-fake"
        fingerprint = "slow-fake"
        max_tokens = None

        def __init__(self, dim, sleep):
            self.dim = dim
            self.sleep = sleep
            self.ready = False

        def token_spans(self, texts):
            return [[(0, len(t))] for t in texts]

        def encode_documents(self, texts):
            if not self.ready:  # tell the parent the embedding loop has begun
                print("ready", flush=True)
                self.ready = True
            time.sleep(self.sleep)
            return np.stack([fake_vector(t, self.dim) for t in texts])

        encode_queries = encode_documents
    """
)

CHILD = FAKE_SOURCE + textwrap.dedent(
    """
    import sys

    from pytest_niah.embed.cache import CachingEmbedder, EmbeddingCache

    path, out_path, total, chunk, dim, sleep = sys.argv[1:7]
    texts = make_texts(int(total))
    fake_vector("warm up numpy.random", 4)  # its lazy import must not meet the signal
    with EmbeddingCache(path) as cache:
        emb = CachingEmbedder(SlowFake(int(dim), float(sleep)), cache, chunk_size=int(chunk))
        out = emb.encode_documents(texts)
        np.save(out_path, out)
        print("embedded", emb.embedded, flush=True)
    """
)

fake: dict[str, Any] = {}
exec(FAKE_SOURCE, fake)


def child_command(path: Path, out: Path) -> list[str]:
    args = [str(path), str(out), str(TOTAL), str(CHUNK), str(DIM), str(SLEEP)]
    return [sys.executable, "-c", CHILD, *args]


def start(path: Path, out: Path) -> subprocess.Popen[str]:
    """Start a run and return once its model has been called for the first time."""
    proc = subprocess.Popen(
        child_command(path, out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        pytest.fail(f"child did not start: {line!r} {proc.communicate()[1]}")
    return proc


def interrupt(path: Path, out: Path, delay: float, sig: signal.Signals) -> tuple[int, str]:
    proc = start(path, out)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


@functools.cache
def expected_vectors() -> dict[str, bytes]:
    """Text key -> the fake model's vector bytes, for every text."""
    return {text_key(t): fake["fake_vector"](t, DIM).tobytes() for t in fake["make_texts"](TOTAL)}


def check_store(path: Path) -> int:
    """Integrity, and every stored vector equal to the fake model's; returns rows stored."""
    expected = expected_vectors()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT fingerprint, text_sha256, dim, dtype, vector FROM embeddings"
        ).fetchall()
    finally:
        conn.close()
    corrupt = 0
    for fingerprint, key, dim, dtype, blob in rows:
        ok = fingerprint == KEY and (dim, dtype) == (DIM, "float32")
        if not ok or blob != expected.get(key):
            corrupt += 1
    assert corrupt == 0, f"{corrupt} corrupt entries"
    # Every write is one transaction of a whole chunk (TOTAL is a multiple of CHUNK).
    assert len(rows) % CHUNK == 0, f"{len(rows)} rows: a chunk was half written"
    return len(rows)


def finish(path: Path, out: Path, stored_before: int) -> None:
    done = subprocess.run(child_command(path, out), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ready", "embedded", str(TOTAL - stored_before)]
    texts = fake["make_texts"](TOTAL)
    result = np.load(out)
    assert np.array_equal(result, np.stack([fake["fake_vector"](t, DIM) for t in texts]))
    assert check_store(path) == TOTAL
    with EmbeddingCache(path) as cache:
        assert cache.count(FINGERPRINT) == TOTAL


def test_sigkill_at_random_points_leaves_a_consistent_resumable_cache(tmp_path: Path):
    path, out = tmp_path / "embeddings.sqlite", tmp_path / "out.npy"
    delays = [random.Random(20240611 + i).uniform(*KILL_DELAYS) for i in range(KILLS)]
    # Each chunk sleeps SLEEP, so the kills leave no time to finish everything.
    assert sum(delays) / SLEEP * CHUNK < TOTAL
    history = []
    for delay in delays:
        returncode, _ = interrupt(path, out, delay, signal.SIGKILL)
        assert returncode == -signal.SIGKILL
        history.append(check_store(path))
    assert history == sorted(history), "a killed run lost rows a previous run stored"
    stored_before = history[-1]
    assert 0 < stored_before < TOTAL, history
    assert not out.exists()
    finish(path, out, stored_before)


def test_ctrl_c_rolls_back_cleanly_and_resumes(tmp_path: Path):
    path, out = tmp_path / "embeddings.sqlite", tmp_path / "out.npy"
    history = []
    for delay in (0.05, 0.1, 0.2):
        returncode, err = interrupt(path, out, delay, signal.SIGINT)
        assert returncode != 0 and err.strip().splitlines()[-1] == "KeyboardInterrupt", err
        history.append(check_store(path))
    stored_before = history[-1]
    assert 0 < stored_before < TOTAL, history
    finish(path, out, stored_before)
