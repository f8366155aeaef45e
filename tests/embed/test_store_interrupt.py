"""Kill an embedding run at random points: the store must stay intact and the run resume exactly."""

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

import numpy as np
import pytest
from embed_fakes import FakeEmbedder, fake_vector, make_inputs

from pytest_niah.embed.store import EmbeddingStore

TOTAL = 4000
CHUNK = 16  # inputs per batch (no token budget)
DIM = 384
SLEEP = 0.004  # per batch: the fake model's "forward pass"
KILLS = 20
KILL_DELAYS = (0.0, 0.08)  # seconds after the model's first call
NAME = "slow-fake"
SPACE = f"{FakeEmbedder(NAME).identity.digest}:document"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = textwrap.dedent(
    """
    import signal
    import sys

    # Ctrl-C as at a terminal, also when the suite was started where SIGINT is ignored
    # (a background job of a script): Python then leaves it ignored in its children.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, sys.argv[7])
    import numpy as np
    from embed_fakes import FakeEmbedder, fake_vector, make_inputs

    from pytest_niah.embed.runner import Encoder
    from pytest_niah.embed.store import EmbeddingStore


    class Slow(FakeEmbedder):
        def encode(self, inputs):
            if not self.batches:  # tell the parent the embedding loop has begun
                print("ready", flush=True)
            return super().encode(inputs)


    path, out, total, chunk, dim, sleep = sys.argv[1:7]
    items = make_inputs(int(total))
    fake_vector("warm up numpy.random", 4)  # its lazy import must not meet the signal
    with EmbeddingStore(path) as store:
        fake = Slow(sys.argv[8], dim=int(dim), delay=float(sleep))
        encoder = Encoder(fake, store, budget=0, batch_size=int(chunk))
        encoder.submit(items)
        table = encoder.finish()
        np.save(out, table.matrix[table.rows([i.key for i in items])])
        print("embedded", encoder.stats.embedded, flush=True)
    """
)


def child_command(path: Path, out: Path) -> list[str]:
    args = [str(path), str(out), str(TOTAL), str(CHUNK), str(DIM), str(SLEEP)]
    return [sys.executable, "-c", CHILD, *args, str(Path(__file__).parent), NAME]


def start(path: Path, out: Path) -> subprocess.Popen[str]:
    """Start a run and return once its model has been called for the first time."""
    proc = subprocess.Popen(
        child_command(path, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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
    """Input key -> the fake model's vector bytes, for every input."""
    return {item.key: fake_vector(item.key, DIM).tobytes() for item in make_inputs(TOTAL)}


def check_store(path: Path) -> int:
    """Integrity, and every stored vector equal to the fake model's; returns rows stored."""
    expected = expected_vectors()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT space, key, dim, dtype, vector FROM vectors").fetchall()
    finally:
        conn.close()
    corrupt = sum(
        1
        for space, key, dim, dtype, blob in rows
        if (space, dim, dtype) != (SPACE, DIM, "float32") or blob != expected.get(key)
    )
    assert corrupt == 0, f"{corrupt} corrupt entries"
    # Every write is one transaction of a whole batch (TOTAL is a multiple of CHUNK).
    assert len(rows) % CHUNK == 0, f"{len(rows)} rows: a batch was half written"
    return len(rows)


def finish(path: Path, out: Path, stored_before: int) -> None:
    done = subprocess.run(child_command(path, out), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ready", "embedded", str(TOTAL - stored_before)]
    items = make_inputs(TOTAL)
    assert np.array_equal(np.load(out), np.stack([fake_vector(i.key, DIM) for i in items]))
    assert check_store(path) == TOTAL
    with EmbeddingStore(path) as store:
        assert store.count(SPACE) == TOTAL


def test_sigkill_at_random_points_leaves_a_consistent_resumable_store(tmp_path: Path):
    path, out = tmp_path / "embeddings.sqlite", tmp_path / "out.npy"
    delays = [random.Random(20240611 + i).uniform(*KILL_DELAYS) for i in range(KILLS)]
    # Each batch sleeps SLEEP, so the kills leave no time to finish everything.
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
