"""Interrupt real plugin runs mid-embedding: the cache survives and the next run resumes it.

Every run is ``python -m pytest --niah-model=packaged-minilm ...`` in a fresh interpreter,
in its own empty project folder, with HF_HUB_OFFLINE=1. All interrupted runs and the final
run share one embedding cache.

1. A reference run, uninterrupted, with its own fresh cache: its results, and the timing of
   its phases. The model loads and the haystacks are built before the first encode call;
   the first call embeds the cache's first chunk (256 texts, in several forward batches)
   and then commits it in one transaction.
2. One run gets Ctrl-C (SIGINT) half-way through its first chunk.
3. Runs are killed with SIGKILL at seeded random points of their first chunk: after a random
   number of its forward batches plus a random fraction of the next one, so that the points
   stay inside the embedding however loaded the machine is. Twenty of them by default
   (ROBUSTNESS_MIN_KILLS sets another number; a minimum under 20 adds kills while the time
   budget lasts).
4. One run is killed the moment its first transaction starts writing (the write-ahead log
   grows), and, if that left the cache empty, one more right after its commit: the cache
   ends up partly filled.
5. A run to completion must pass, embed exactly the texts the cache is missing, and write
   results equal to the reference's.

After every interruption the cache must open with :class:`~pytest_niah.embed.cache.EmbeddingCache`
and pass ``PRAGMA integrity_check``; every vector in it must equal the reference run's.

The points are observed, not guessed: an observer plugin (``-p``, outside the project folder;
it only watches) writes a file when pytest-niah first calls the model and one after every
forward batch, and counts the texts that reach the model. Under load a model load took 8 to
30 s here, and the first chunk 6 to 30 s.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_niah.embed.cache import EmbeddingCache

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals"),
]

REPO = Path(__file__).resolve().parents[2]
SHARED_CORPUS = REPO.parent / "shared" / "corpus" / "gutenberg"
SEED = 20240611
# At least MIN_KILLS random kills, more while the whole test fits BUDGET_S, at most MAX_KILLS.
MIN_KILLS = int(os.environ.get("ROBUSTNESS_MIN_KILLS", "20"))  # the issue asks for 20
MAX_KILLS = max(20, MIN_KILLS)
BUDGET_S = float(os.environ.get("ROBUSTNESS_KILL_BUDGET_S", "180"))
RUN_TIMEOUT_S = 300
POLL_S = 0.002
OBSERVER = "niah_robustness_observer"
OBSERVER_SOURCE = textwrap.dedent(
    '''
    """Watches a pytest-niah run: model calls (texts) and forward batches, as files."""

    import json
    import os
    import time

    CALLS = []
    BATCHES = []


    def _write(path, text):
        with open(path + ".part", "w") as out:  # whole, then renamed: never read half-written
            out.write(text)
        os.replace(path + ".part", path)


    def pytest_configure(config):
        from sentence_transformers import SentenceTransformer

        from pytest_niah.embed.embedders import SentenceTransformerEmbedder

        out = os.environ["ROBUSTNESS_OBSERVER_OUT"]
        for name in ("encode_documents", "encode_queries"):
            original = getattr(SentenceTransformerEmbedder, name)

            def wrapped(self, texts, _original=original):
                start = time.time()
                if not CALLS:
                    _write(out + ".started", str(start))
                result = _original(self, texts)
                CALLS.append([start, time.time(), len(texts)])
                return result

            setattr(SentenceTransformerEmbedder, name, wrapped)

        forward = SentenceTransformer.encode

        def batch(self, sentences, *args, **kwargs):
            start = time.time()
            result = forward(self, sentences, *args, **kwargs)
            if CALLS or os.path.exists(out + ".started"):
                BATCHES.append([start, time.time(), len(sentences)])
                _write(out + ".batches", str(len(BATCHES)))
            return result

        SentenceTransformer.encode = batch


    def pytest_unconfigure(config):
        with open(os.environ["ROBUSTNESS_OBSERVER_OUT"], "w") as out:
            json.dump({"calls": CALLS, "batches": BATCHES}, out)
    '''
)


def plugin_args(cache_dir: Path) -> list[str]:
    return [
        "--niah-model=packaged-minilm",
        f"--niah-corpus={SHARED_CORPUS}",
        "--niah-lengths=128,256",
        "--niah-positions=4",
        "--niah-groups=dietary,location",
        f"--niah-cache-dir={cache_dir}",
        "-p",
        "no:cacheprovider",
        "-q",
    ]


@dataclass
class Run:
    """One started run and what its observer has said so far."""

    proc: subprocess.Popen[str]
    started: float
    project: Path
    observer: Path

    def _read(self, suffix: str) -> str | None:
        try:
            return Path(str(self.observer) + suffix).read_text()
        except FileNotFoundError:
            return None

    def batches_done(self) -> int:
        return int(self._read(".batches") or 0)

    def wait(self, ready: Callable[[], bool]) -> bool:
        """Poll until ``ready()``; False if the run ended (or timed out) first."""
        while not ready():
            if self.proc.poll() is not None or time.time() - self.started > RUN_TIMEOUT_S:
                return False
            time.sleep(POLL_S)
        return True

    def wait_for_model(self) -> float | None:
        """Seconds from start to pytest-niah's first model call; None if the run ended first."""
        if not self.wait(lambda: self._read(".started") is not None):
            return None
        return float(self._read(".started") or 0) - self.started

    def finish(self) -> str:
        return self.proc.communicate(timeout=RUN_TIMEOUT_S)[0]


@dataclass
class Lab:
    """Where the runs happen and how they are started."""

    root: Path
    runs: int = 0
    log: list[str] = field(default_factory=list)

    def start(self, cache_dir: Path, *extra: str) -> Run:
        self.runs += 1
        project = self.root / f"project-{self.runs:02d}"
        project.mkdir()
        observer = self.root / f"observer-{self.runs:02d}.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith("NIAH_")}
        path = os.pathsep.join(filter(None, [str(self.root / "plugins"), env.get("PYTHONPATH")]))
        env.update(
            HF_HUB_OFFLINE="1",
            TOKENIZERS_PARALLELISM="false",
            PYTHONPATH=path,
            ROBUSTNESS_OBSERVER_OUT=str(observer),
        )
        command = [sys.executable, "-m", "pytest", *plugin_args(cache_dir), "-p", OBSERVER, *extra]
        started = time.time()
        proc = subprocess.Popen(
            command,
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return Run(proc, started, project, observer)

    def complete(self, cache_dir: Path, name: str) -> dict[str, Any]:
        """An uninterrupted run writing ``name``.json: its results, timings and texts embedded."""
        run = self.start(cache_dir, f"--niah-json={name}.json")
        output = run.finish()
        duration = time.time() - run.started
        assert run.proc.returncode == 0, output
        seen = json.loads(run.observer.read_text())
        return {
            "results": json.loads((run.project / f"{name}.json").read_text()),
            "texts": sum(n for _, _, n in seen["calls"]),
            "calls": [(a - run.started, b - run.started, n) for a, b, n in seen["calls"]],
            "batches": [(a - run.started, b - run.started, n) for a, b, n in seen["batches"]],
            "duration": duration,
        }


def cache_rows(cache_dir: Path) -> int:
    """Rows of the cache, after checking that it opens and is intact."""
    path = cache_dir / "embeddings.sqlite"
    if not path.exists():
        return 0
    with EmbeddingCache(path) as cache:
        assert cache.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return cache.count()


def committed_rows(cache_dir: Path) -> int:
    """Rows a writer has committed, read from outside (read-only); -1 if not readable yet."""
    uri = f"file:{cache_dir / 'embeddings.sqlite'}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return -1


def wal_size(cache_dir: Path) -> int:
    try:
        return (cache_dir / "embeddings.sqlite-wal").stat().st_size
    except FileNotFoundError:
        return 0


def stored_vectors(cache_dir: Path) -> dict[tuple[str, str], np.ndarray]:
    conn = sqlite3.connect(cache_dir / "embeddings.sqlite")
    try:
        rows = conn.execute("SELECT fingerprint, text_sha256, vector FROM embeddings").fetchall()
    finally:
        conn.close()
    return {(f, k): np.frombuffer(v, np.float32) for f, k, v in rows}


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two results files differ; numbers may differ by 1e-6 at most."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} != {len(b)} items"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{where}[{i}]")
        ]
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return [] if math.isclose(a, b, rel_tol=0, abs_tol=1e-6) else [f"{where}: {a} != {b}"]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def test_interrupted_runs_leave_a_cache_the_next_run_resumes(tmp_path: Path, capsys):
    if not (SHARED_CORPUS / "manifest.json").is_file():
        pytest.fail(f"the shared corpus is missing at {SHARED_CORPUS}", pytrace=False)
    began = time.monotonic()
    lab = Lab(tmp_path)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / f"{OBSERVER}.py").write_text(OBSERVER_SOURCE)

    # 1. The reference, with its own fresh cache.
    reference = lab.complete(tmp_path / "fresh-cache", "reference")
    total = cache_rows(tmp_path / "fresh-cache")
    assert reference["texts"] == total > 0
    first_start, first_end, first_texts = reference["calls"][0]
    chunk_batches = [b for b in reference["batches"] if first_start <= b[0] and b[1] <= first_end]
    assert sum(n for *_, n in chunk_batches) == first_texts, reference["batches"]
    # Kill points: after k = 0..n-2 whole batches, plus up to half of the shortest batch but
    # the last (often a short remainder); batch k and the last are then still to come, so
    # the commit is not reached even on a machine twice as fast as during the reference.
    last_safe = max(len(chunk_batches) - 2, 0)
    if len(chunk_batches) > 1:
        jitter = 0.5 * min(b - a for a, b, _ in chunk_batches[:-1])
    else:
        jitter = 0.5 * (first_end - first_start)

    cache = tmp_path / "shared-cache"
    history: list[tuple[str, float, int | None, int]] = []  # (what, at, exit code, rows)

    def record(what: str, run: Run, killed_at: float) -> int:
        run.finish()
        rows = cache_rows(cache)  # opens; integrity_check == "ok"
        previous = max((r for *_, r in history), default=0)
        history.append((what, round(killed_at - run.started, 2), run.proc.returncode, rows))
        assert rows >= previous, f"an interrupted run lost rows: {history}"
        return rows

    def interrupt(run: Run, batches: int, pause: float, sig: signal.Signals) -> float:
        """After ``batches`` forward batches and ``pause`` s (or at the first write), signal."""
        assert run.wait_for_model() is not None, f"the run ended before embedding: {run.finish()}"
        size = wal_size(cache)
        writing = lambda: wal_size(cache) != size  # noqa: E731
        assert run.wait(lambda: run.batches_done() >= batches or writing()), run.finish()
        deadline = time.time() + pause
        run.wait(lambda: time.time() >= deadline or writing())
        assert run.proc.poll() is None, f"the run ended before it was interrupted: {run.finish()}"
        run.proc.send_signal(sig)
        return time.time()

    # 2. Ctrl-C half-way through the first chunk.
    run = lab.start(cache)
    at = interrupt(run, len(chunk_batches) // 2, 0.0, signal.SIGINT)
    output = run.finish()
    assert run.proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output and "Traceback" not in output, output
    record("SIGINT", run, at)

    # 3. SIGKILL at seeded random points of the first chunk.
    rng = random.Random(SEED)
    kills = 0
    while kills < MAX_KILLS:
        spent = time.monotonic() - began
        if kills >= MIN_KILLS and spent + 4 * reference["duration"] > BUDGET_S:
            break
        batches, pause = rng.randint(0, last_safe), rng.uniform(0.0, jitter)
        run = lab.start(cache)
        at = interrupt(run, batches, pause, signal.SIGKILL)
        kills += 1
        record(f"SIGKILL after {batches} batches + {pause:.2f} s", run, at)

    # 4a. SIGKILL as the first chunk is being written (the write-ahead log grows).
    run = lab.start(cache)
    at = interrupt(run, len(chunk_batches) + 1, RUN_TIMEOUT_S, signal.SIGKILL)
    record("SIGKILL while writing", run, at)
    # 4b. If that rolled back, SIGKILL right after the next commit.
    if history[-1][3] == 0:
        run = lab.start(cache)
        run.wait(lambda: committed_rows(cache) > 0)
        run.proc.kill()
        record("SIGKILL after a commit", run, time.time())

    # 5. The cache is intact and holds the reference's vectors; the next run to completion
    #    embeds only what is missing and gives the reference results.
    before = cache_rows(cache)
    assert 0 < before < total, history
    expected = stored_vectors(tmp_path / "fresh-cache")
    for key, vector in stored_vectors(cache).items():
        assert np.allclose(vector, expected[key], rtol=0, atol=1e-6), key
    final = lab.complete(cache, "final")
    assert cache_rows(cache) == total
    assert final["texts"] == total - before, (final["texts"], total, before)
    diff = differences(reference["results"], final["results"])
    assert diff == [], diff[:20]
    exact = reference["results"] == final["results"]

    elapsed = time.monotonic() - began
    with capsys.disabled():
        print(
            f"\n[interrupted runs] reference {reference['duration']:.1f} s: first model call at "
            f"{first_start:.1f} s, first chunk {first_texts} texts in {len(chunk_batches)} "
            f"batches, {first_end - first_start:.1f} s; {total} texts in all. 1 SIGINT + "
            f"{kills} random SIGKILL (seed {SEED}) + {len(history) - 1 - kills} at the commit; "
            f"(what, s after start, exit code, cache rows): {history}. Final run "
            f"{final['duration']:.1f} s embedded {final['texts']} texts ({before} cached); "
            f"results {'identical' if exact else 'equal within 1e-6'}; {elapsed:.0f} s in all"
        )
    assert kills >= MIN_KILLS
