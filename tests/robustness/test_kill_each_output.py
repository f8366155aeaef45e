"""SIGKILL while writing each output: the previous output stays whole, no temp file stays.

For each output pytest-niah writes -- the results file, the report folder, a saved run, a
snapshot file and the embedding cache -- a child process writes that output through the
package's own writer in an endless loop, alternating between two distinct valid versions A
and B (tests/robustness/kill_writer.py, a fork server: imports and each version's figures
are paid once, so a kill costs milliseconds, not a pytest run). The output first
holds A (the "previous output"); then ``ROBUSTNESS_MIN_KILLS`` times (20 by default) a
child is started and, after it printed ``ready``, killed with SIGKILL:

- half the kills (seeded random choice) come after a random delay: 20-300 ms, or up to 1.2
  writer calls where one call takes longer;
- the other half are aimed into a file write: the child prints a line just before each
  ``write_atomic`` call (each ``put_many`` of the cache) and the kill comes a random time
  within the slowest write's duration after the k-th such line.

After every kill, each file of the output exists and is byte for byte version A or version
B -- never a truncated, empty or mixed file -- and nothing but those files and temporary
files of killed writes (at most two per file: each write removes the ones killed writes of
its file left) is in the folder. A report folder never holds files of both versions: it
is replaced as a unit (tests/robustness/test_kill_report_folder.py kills it between files).
The cache instead passes ``PRAGMA integrity_check``, holds exactly the first N keys for a
whole number of transactions, never fewer than after the kill before, every vector right,
all readable through :class:`EmbeddingStore`. Kills that
found a temporary file (they landed inside a write) are counted and printed, not required:
how many land there depends on the machine's load and disk. Then one complete write (the
"next run") leaves the output equal to its last version and no temporary file at all (for
the cache: no ``-wal``, ``-shm`` or ``-journal`` file).

A plain ``open(path, "w").write(...)`` in place of ``write_atomic`` fails this test for
every file output (an empty or truncated file after the first aimed kills); a cache write
without its transaction fails it too (rows of part of a batch).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytest_niah
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.files import TMP_MARK

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fork and POSIX signals"
)

WRITER_SCRIPT = Path(__file__).with_name("kill_writer.py")
MIN_KILLS = int(os.environ.get("ROBUSTNESS_MIN_KILLS", "20"))
SEED = 15
ANSWER_TIMEOUT_S = 120
# A lock file the cache keeps between runs on purpose (filelock leaves it; it is empty).
CACHE_LOCK_SUFFIX = ".lock"
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def _load_writer() -> Any:
    spec = importlib.util.spec_from_file_location("niah_kill_writer", WRITER_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


writer = _load_writer()


# --------------------------------------------------------------------------- the fork server


class Server:
    """kill_writer.py: one request, one answer; the children's lines come on its stdout."""

    def __init__(self, log: Path) -> None:
        env = dict(os.environ)
        env.pop("GITHUB_STEP_SUMMARY", None)
        # The children import the very package this process tests (a checkout or a wheel).
        package_root = str(Path(pytest_niah.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            env=env,
        )
        self.buffer = b""
        self.live: int | None = None  # a writing child not killed yet
        assert self.line(ANSWER_TIMEOUT_S) == "ready", self.log_text()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def line(self, timeout: float) -> str | None:
        """The next line, or None when none came within ``timeout`` seconds."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise AssertionError(f"the kill writer ended:\n{self.log_text()}")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def send(self, request: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next JSON answer; lines of an earlier child (``w``) are skipped."""
        while True:
            line = self.line(ANSWER_TIMEOUT_S)
            if line is None:
                raise AssertionError(f"the kill writer gave no answer:\n{self.log_text()}")
            if line.startswith("{"):
                answer: dict[str, Any] = json.loads(line)
                return answer

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.send(request)
        return self.answer()

    def close(self) -> None:
        if self.live is not None:  # a test failed before its kill: stop that writer too
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.live, signal.SIGKILL)
        if self.proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):  # the writer ended: its failure says why
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = Server(tmp_path_factory.mktemp("kill-writer") / "writer.log")
    try:
        yield started
    finally:
        started.close()


# --------------------------------------------------------------------------- checks


def listing(folder: Path) -> tuple[dict[str, bytes], list[str]]:
    """The files under ``folder`` by relative path, and the temporary files among them."""
    files: dict[str, bytes] = {}
    temps: list[str] = []
    for path in sorted(folder.rglob("*")):
        if path.is_dir():
            continue
        relative = str(path.relative_to(folder))
        if TMP_MARK in path.name:
            temps.append(relative)
        else:
            files[relative] = path.read_bytes()
    return files, temps


def versions_of(reference: Path) -> dict[str, tuple[bytes, bytes]]:
    """Each file of the output -> (its version A, its version B), all distinct."""
    a, a_temps = listing(reference / "A")
    b, b_temps = listing(reference / "B")
    assert a_temps == [] and b_temps == []
    assert a and set(a) == set(b), (sorted(a), sorted(b))
    for name in a:
        assert a[name] != b[name], f"versions A and B of {name} must differ"
    return {name: (a[name], b[name]) for name in a}


def check_files(
    out: Path, versions: dict[str, tuple[bytes, bytes]], when: str
) -> tuple[list[str], bool]:
    """Every file whole (A or B) and nothing else but temps.

    Returns:
        The temporary files, and whether the files are of both versions (a report folder
        whose write was cut between two files: each file whole, the folder mixed).
    """
    files, temps = listing(out)
    assert set(files) == set(versions), f"{when}: files {sorted(files)}, not {sorted(versions)}"
    for name, data in files.items():
        a, b = versions[name]
        if data not in (a, b):
            raise AssertionError(
                f"{when}: {name} is neither version A ({len(a)} bytes) nor B ({len(b)} "
                f"bytes) but {len(data)} bytes starting {data[:60]!r}"
            )
    for name in versions:
        stale = [t for t in temps if name_of(t) == name]
        assert len(stale) <= 2, f"{when}: temporary files of {name} pile up: {stale}"
    return temps, len({versions[name].index(data) for name, data in files.items()}) > 1


def name_of(temp: str) -> str:
    """The file a temporary file was written for: ``.NAME.niah-tmp-PID-xxxx`` -> NAME."""
    name = Path(temp).name
    return str(Path(temp).with_name(name[1 : name.index(TMP_MARK)]))


def cache_rows(path: Path, when: str) -> int:
    """The cache is intact and holds keys 0..N-1 (whole transactions) with their vectors."""
    conn = sqlite3.connect(path)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchall()
        assert check == [("ok",)], f"{when}: integrity_check says {check}"
        rows = conn.execute(
            "SELECT space, key, dim, dtype, vector FROM vectors ORDER BY key"
        ).fetchall()
    finally:
        conn.close()
    count = len(rows)
    assert count % writer.BATCH == 0, f"{when}: {count} rows: part of a transaction was kept"
    keys = [row[1] for row in rows]
    assert keys == [writer.key_of(i) for i in range(count)], f"{when}: keys missing or foreign"
    assert {(r[0], r[2], r[3]) for r in rows} <= {(writer.SPACE, writer.DIM, "float32")}
    stored = np.frombuffer(b"".join(row[4] for row in rows), dtype=np.float32)
    expected = (
        np.arange(writer.DIM, dtype=np.float32)[None, :]
        + np.arange(count, dtype=np.float32)[:, None]
    )
    assert np.array_equal(stored.reshape(count, writer.DIM), expected), f"{when}: wrong vectors"
    with EmbeddingStore(path) as store:
        found = store.get_many(writer.SPACE, keys, dim=writer.DIM)
        assert len(found) == count and store.dropped == 0, f"{when}: rows not readable"
    return count


def cache_leftovers(folder: Path) -> list[str]:
    """Files of the cache folder other than the database and its lock file."""
    keep = {writer.CACHE_FILE, writer.CACHE_FILE + CACHE_LOCK_SUFFIX}
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


# --------------------------------------------------------------------------- the kill loop


@dataclass
class Kills:
    """What the kills of one output found."""

    kind: str
    timed: int = 0
    aimed: int = 0
    with_temp: int = 0
    mixed: int = 0
    writes_seen: int = 0
    cache_rows: list[int] = field(default_factory=list)

    def summary(self) -> str:
        extra = f", rows {self.cache_rows[0]}->{self.cache_rows[-1]}" if self.cache_rows else ""
        return (
            f"{self.kind}: {self.timed + self.aimed} SIGKILL ({self.timed} timed, "
            f"{self.aimed} aimed), {self.with_temp} found a temp file, {self.mixed} a folder "
            "of both versions, "
            f"{self.writes_seen} writes begun{extra}"
        )


def kill_one(server: Server, request: dict[str, Any], plan: tuple[str, float, int]) -> int:
    """Start a writing child, kill it as ``plan`` says; return the writes it began."""
    mode, delay, nth = plan
    server.send(request)
    pid, ready, writes = None, False, 0

    def take(line: str) -> None:
        nonlocal pid, ready, writes
        if line == "ready":
            ready = True
        elif line == "w":
            writes += 1
        else:
            pid = server.live = json.loads(line)["pid"]

    while pid is None or not ready:
        line = server.line(ANSWER_TIMEOUT_S)
        assert line is not None, f"no child started:\n{server.log_text()}"
        take(line)
    if mode == "timed":
        deadline = time.monotonic() + delay
        while (left := deadline - time.monotonic()) > 0:
            line = server.line(left)
            if line is not None:
                take(line)
    else:
        while writes < nth:
            line = server.line(ANSWER_TIMEOUT_S)
            assert line is not None, f"the child stopped writing:\n{server.log_text()}"
            take(line)
        time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    ended = server.ask({"op": "reap", "pid": pid})
    server.live = None
    assert ended["signal"] == signal.SIGKILL, f"{ended}: the child ended by itself:\n" + (
        server.log_text()
    )
    return writes


@pytest.mark.parametrize("kind", writer.KINDS)
def test_sigkill_while_writing_keeps_the_previous_output_whole(
    kind: str, server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    began = time.monotonic()
    rng = random.Random(f"{SEED}-{kind}")
    timing = server.ask({"op": "reference", "kind": kind, "folder": str(tmp_path / "ref")})
    out = tmp_path / "out"
    versions = {} if kind == "cache" else versions_of(tmp_path / "ref")
    longest = max(0.3, 1.2 * timing["call_s"])
    kills = Kills(kind)

    # The previous output: version A, written whole.
    done = server.ask({"op": "once", "kind": kind, "out": str(out), "versions": [0], "start": 0})
    assert done == {"signal": None, "exit": 0}, server.log_text()
    if kind == "cache":
        rows = cache_rows(out / writer.CACHE_FILE, "before the kills")
        kills.cache_rows.append(rows)
    else:
        check_files(out, versions, "before the kills")
        assert listing(out)[0] == {name: v[0] for name, v in versions.items()}

    for n in range(MIN_KILLS):
        if rng.random() < 0.5:
            plan = ("timed", rng.uniform(0.02, longest), 0)
            kills.timed += 1
        else:
            nth = rng.randint(1, timing["writes"] + 1)  # a write of the first call, or the next
            plan = ("aimed", rng.uniform(0.0, timing["write_s"]), nth)
            kills.aimed += 1
        request = {
            "op": "loop",
            "kind": kind,
            "out": str(out),
            "first": rng.randint(0, 1),
            "start": kills.cache_rows[-1] if kills.cache_rows else 0,
        }
        kills.writes_seen += kill_one(server, request, plan)
        when = f"after kill {n + 1} ({plan[0]}, {plan[1] * 1000:.1f} ms)"
        if kind == "cache":
            rows = cache_rows(out / writer.CACHE_FILE, when)
            assert rows >= kills.cache_rows[-1], f"{when}: committed rows were lost"
            kills.cache_rows.append(rows)
        else:
            temps, mixed = check_files(out, versions, when)
            kills.with_temp += bool(temps)
            kills.mixed += mixed

    assert kills.timed + kills.aimed == MIN_KILLS
    assert kills.mixed == 0, f"{kind}: {kills.mixed} kills left a folder of both versions"
    assert kills.writes_seen > 0, "no kill came after a write had begun"

    # The next run: one complete write of A then B.
    start = kills.cache_rows[-1] if kills.cache_rows else 0
    request = {"op": "once", "kind": kind, "out": str(out), "versions": [0, 1], "start": start}
    done = server.ask(request)
    assert done == {"signal": None, "exit": 0}, server.log_text()
    if kind == "cache":
        assert cache_leftovers(out) == [], "the next run left temporary files"
        assert cache_rows(out / writer.CACHE_FILE, "after the next run") == start + 2 * (
            writer.BATCH
        )
    else:
        files, temps = listing(out)
        assert temps == [], f"the next run left temporary files: {temps}"
        assert files == {name: v[1] for name, v in versions.items()}

    with capsys.disabled():
        print(f"\n[kill each output] {kills.summary()}, {time.monotonic() - began:.1f} s")
