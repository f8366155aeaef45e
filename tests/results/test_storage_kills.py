"""SIGKILL during saves into the run store: every saved run whole, no temp file after the next.

A child process (tests/results/store_kill_writer.py, a fork server: the imports are paid
once) saves runs into one store forever, alternating a new name (the exclusive create) and
one name replaced each time (``overwrite``), and is killed with SIGKILL at least
``ROBUSTNESS_MIN_KILLS`` times (20 by default): after a seeded random number of saves and a
random delay. After every kill each run file in the store
is a whole saved run (it loads, and its name is its file's), only run files and temporary
files of killed saves are there, and readers list only the run files. Then one save in this
process (the "next run") leaves no temporary file at all, and every run still loads.
Each kill comes within one save's time (the gap between two saves' starts) after a save
began; kills that left a temporary file landed inside a save and are counted.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import pytest_niah
from pytest_niah.files import TMP_MARK
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.storage import RunStore

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fork and POSIX signals"
)

WRITER = Path(__file__).with_name("store_kill_writer.py")
MIN_KILLS = int(os.environ.get("ROBUSTNESS_MIN_KILLS", "20"))
SEED = 21
TIMEOUT_S = 120
LABEL = "model-a"


class Server:
    """store_kill_writer.py: one request, one answer; a child's ``w`` lines are skipped."""

    def __init__(self, log: Path) -> None:
        env = dict(os.environ)
        package_root = str(Path(pytest_niah.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            env=env,
        )
        self.buffer = b""
        assert self.line() == "ready", log.read_text()

    def line(self) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + TIMEOUT_S
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no line from the writer:\n{self.log.read_text()}")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"the writer ended:\n{self.log.read_text()}")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.line()
            if line.startswith("{"):
                answer: dict[str, Any] = json.loads(line)
                return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)


def check_whole(store: Path) -> list[Path]:
    """Every run file loads whole; only runs and temp files are there. Returns the temps."""
    folder = RunStore(store).folder(LABEL)
    temps = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if TMP_MARK in path.name:
            temps.append(path)
            continue
        assert path.name.endswith(".json.gz"), path
        metadata, results = load_run(path)
        assert metadata["name"] == path.name.removesuffix(".json.gz")
        assert results.rows("length")
    assert RunStore(store).files() == sorted(p for p in folder.glob("*.json.gz"))
    return temps


def test_kills_during_saves_leave_every_run_whole_and_the_next_save_no_temp(tmp_path):
    chooser = random.Random(SEED)
    store = tmp_path / "runs"
    server = Server(tmp_path / "writer.log")
    kills = inside = 0
    try:
        for round_ in range(MIN_KILLS):
            pid = server.ask({"op": "loop", "store": str(store), "round": round_})["pid"]
            try:
                assert server.line() == "w"
                seen = time.monotonic()
                for _ in range(chooser.randint(1, 4)):  # let some saves finish first
                    assert server.line() == "w"
                    gap, seen = time.monotonic() - seen, time.monotonic()
                time.sleep(chooser.uniform(0, gap))  # within the save that just began
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            assert server.ask({"op": "reap", "pid": pid})["signal"] == signal.SIGKILL
            kills += 1
            inside += bool(check_whole(store))
    finally:
        server.close()
    print(f"{kills} kills, {inside} left a temporary file (landed inside a save)")
    assert kills >= MIN_KILLS

    # The next run: one save removes every stale temporary file of the folder.
    any_run = RunStore(store).files()[0]
    _, results = load_run(any_run)
    RunStore(store).save(results, "next-run", label=LABEL)
    assert check_whole(store) == []
    names = {p.name.removesuffix(".json.gz") for p in RunStore(store).files()}
    assert "kept" in names and "next-run" in names
