"""Kill real pytest-niah runs at exact points: nothing is lost, damaged or left half-written.

Every run is ``pytest --niah-model=packaged-static`` on a small grid, in a child process of
a fork server (tests/robustness/kill_driver.py: it imports torch and pytest-niah once, so a
run costs its model load, not the imports). The child kills itself at a code path, not
after a delay, so every kill lands where it is meant to on any machine:

1. A reference run, uninterrupted, with its own cache and outputs.
2. Store phase: runs sharing one embedding cache are killed (SIGKILL) before, inside
   (rows written, COMMIT not yet) and after their N-th write of embeddings; one gets
   Ctrl-C (SIGINT) inside a write. Every batch is one text (``--niah-token-budget=0
   --niah-batch-size=1``), so the rows each run adds are known exactly.
3. Output phase: runs are killed while writing each output -- the results-cache entry
   (``DIR/results/<key>.json``), ``--niah-json`` and the ``--niah-save`` run -- with the
   temporary file cut in half (a kill mid-write), whole but not renamed, or just renamed;
   one gets Ctrl-C while writing the results-cache entry. ``--niah-json`` and the saved
   run hold an older file ("the previous output") before each of those runs. The phase's
   first run resumes the store: it embeds exactly the texts the store lacks.
4. A final run to completion: it reuses the results entry the output phase left.

After every interruption: the store passes ``PRAGMA integrity_check``, opens as an
:class:`EmbeddingStore`, holds exactly the rows expected and only the reference's vectors
(byte for byte); each output is absent, the previous file untouched, or the complete new
file -- never a truncated one; a killed write leaves its temporary file and the next write
of that file removes it; Ctrl-C leaves none. In the end the store equals the reference's,
``--niah-json`` is byte-identical to the reference's but for the speed record (the only
timing field), the saved run equals the reference's but for ``saved_at`` and speed, and no
temporary file is left.
"""

from __future__ import annotations

import gzip
import json
import re
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

import pytest

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.provenance import machine_info
from pytest_niah.results.store_layout import run_key

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and POSIX signals"),
]

DRIVER = Path(__file__).with_name("kill_driver.py")
MODEL = "packaged-static"
SAVE = "kept"
TMP_MARK = ".niah-tmp-"
RUN_TIMEOUT_S = 300
PREVIOUS_JSON = b'{"previous": "a --niah-json file of an earlier run"}\n'
PREVIOUS_RUN = b'{"previous": "a run saved earlier under this name"}\n'
# The progress line (stderr) and the summary line (stdout) both say it.
EMBEDDED = re.compile(r"\b(\d+) texts embedded, (\d+) read from the cache")

# Store phase, in order: (N, when, signal) -- at the N-th write of embeddings of the run.
STORE_PLAN = [
    (1, "uncommitted", "SIGKILL"),
    (2, "after", "SIGKILL"),
    (2, "uncommitted", "SIGINT"),
    (3, "before", "SIGKILL"),
    (3, "after", "SIGKILL"),
]
# Output phase, in order: (output, when, signal). The results entry's "after" comes last of
# its kills: from then on runs reuse the results (no model load: about a second each) and
# write only --niah-json and the saved run.
OUTPUT_PLAN = [
    ("entry", "torn", "SIGKILL"),
    ("entry", "before", "SIGINT"),
    ("entry", "after", "SIGKILL"),
    *[
        (output, when, "SIGKILL")
        for output in ("json", "saved")
        for when in ("torn", "before", "after", "torn", "before", "after", "torn")
    ],
]
# Sentence token counts are saved by the haystack thread while the main thread embeds: a
# kill in the store phase may or may not catch that write. The next run that reads them
# removes its temporary file; the output phase's first run does.
COUNTS = "sentence-counts"


def grid_args(root: Path) -> list[str]:
    return [  # default verbosity: the progress line says what was embedded, killed or not
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        f"--niah-model={MODEL}",
        "--niah-lengths=128",
        "--niah-positions=4",
        "--niah-groups=dietary-01",
        "--niah-bootstrap=0",
        "--niah-token-budget=0",
        "--niah-batch-size=1",
        f"--niah-cache-dir={root / 'cache'}",
        f"--niah-json={root / 'out' / 'results.json'}",
        f"--niah-save={SAVE}",
        "--niah-save-overwrite",  # each run saves over the one before: the point of the test
        f"--niah-storage={root / 'out' / 'runs'}",
    ]


class Driver:
    """The fork server: one request, one answer, one run at a time."""

    def __init__(self, log: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
        )
        assert self._line(RUN_TIMEOUT_S) == "ready", log.read_text()

    def _line(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"the kill driver gave no answer in {timeout} s")
        return self.proc.stdout.readline().strip()

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self._line(RUN_TIMEOUT_S))
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Lab:
    """Runs in project folders under ``root``; the kill runs share ``root/shared``."""

    root: Path
    driver: Driver
    runs: int = 0
    history: list[tuple[str, int | None, int | None, float, int]] = field(default_factory=list)

    def run(self, where: Path, kill: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
        self.runs += 1
        project = self.root / f"project-{self.runs:02d}"
        project.mkdir()
        log = project / "pytest.log"
        request = {
            "cwd": str(project),
            "args": [*grid_args(where), f"--basetemp={project / 'basetemp'}"],
            "env": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
            "log": str(log),
            "kill": kill,
        }
        started = time.monotonic()
        answer = self.driver.run(request)
        answer["seconds"] = round(time.monotonic() - started, 1)
        return answer, log.read_text()


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    driver = Driver(tmp_path / "driver.log")
    try:
        yield Lab(tmp_path, driver)
    finally:
        driver.close()


# --------------------------------------------------------------------------- checks


def store_rows(cache: Path) -> dict[tuple[str, str], bytes]:
    """Every row of the store after checking that it is intact and opens; {} if absent."""
    path = cache / CACHE_FILE
    if not path.exists():
        return {}
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = conn.execute("SELECT space, key, dim, dtype, vector FROM vectors").fetchall()
    finally:
        conn.close()
    with EmbeddingStore(path) as store:
        assert store.count() == len(rows)
    assert all(dtype == "float32" and len(blob) == 4 * dim for _, _, dim, dtype, blob in rows)
    return {(space, key): blob for space, key, _, _, blob in rows}


def temps(folder: Path) -> list[Path]:
    """Temporary files of atomic writes anywhere under ``folder``."""
    return sorted(p for p in folder.rglob(f"*{TMP_MARK}*"))


def saved_run_path(where: Path) -> Path:
    return where / "out" / "runs" / run_key(MODEL, machine_info()) / f"{SAVE}.json.gz"


def without_time(data: bytes) -> dict[str, Any]:
    run: dict[str, Any] = json.loads(gzip.decompress(data))
    run.pop("saved_at")
    run["results"].pop("speed")  # measured: a resumed run embeds less, so it differs
    return run


def without_speed(data: bytes) -> bytes:
    """A results file as the same JSON text without its speed record (measured, so it differs
    between runs); a file that is not whole raises ``ValueError``."""
    results: dict[str, Any] = json.loads(data)
    results.pop("speed")
    return json.dumps(results, indent=1, sort_keys=True).encode()


def embedded(log: str) -> tuple[int, int]:
    match = EMBEDDED.search(log)
    assert match is not None, log
    return int(match.group(1)), int(match.group(2))


@dataclass
class Reference:
    json: bytes
    saved: dict[str, Any]
    entry: bytes
    rows: dict[tuple[str, str], bytes]


@dataclass
class Shared:
    """The kill runs' shared cache and outputs, and what a check may find there."""

    where: Path
    reference: Reference

    @property
    def cache(self) -> Path:
        return self.where / "cache"

    @property
    def json(self) -> Path:
        return self.where / "out" / "results.json"

    @property
    def saved(self) -> Path:
        return saved_run_path(self.where)

    def entries(self) -> list[Path]:
        folder = self.cache / "results"
        return sorted(p for p in folder.glob("*.json") if TMP_MARK not in p.name)

    def check_outputs(self) -> None:
        """Each output absent, the previous file, or the complete new one."""
        for entry in self.entries():
            assert without_speed(entry.read_bytes()) == self.reference.entry, f"{entry}"
            NiahResults.load(entry)
        if self.json.exists():
            data = self.json.read_bytes()
            assert data == PREVIOUS_JSON or without_speed(data) == self.reference.json
        if self.saved.exists():
            data = self.saved.read_bytes()
            assert data == PREVIOUS_RUN or without_time(data) == self.reference.saved

    def check_store(self, expected: int) -> None:
        rows = store_rows(self.cache)
        assert len(rows) == expected, (len(rows), expected)
        foreign = {k for k, blob in rows.items() if self.reference.rows.get(k) != blob}
        assert not foreign, f"{len(foreign)} rows that are not the reference's vectors"

    def seed_previous_outputs(self) -> None:
        self.json.parent.mkdir(parents=True, exist_ok=True)
        self.json.write_bytes(PREVIOUS_JSON)
        self.saved.parent.mkdir(parents=True, exist_ok=True)
        self.saved.write_bytes(PREVIOUS_RUN)


def assert_interrupted(answer: dict[str, Any], log: str) -> None:
    """Ctrl-C: pytest's own exit (2), KeyboardInterrupt named, no traceback."""
    assert answer["fired"], log
    assert answer["exit"] == pytest.ExitCode.INTERRUPTED, (answer, log)
    assert "KeyboardInterrupt" in log, log
    assert "Traceback" not in log and "INTERNALERROR" not in log, log


def assert_killed(answer: dict[str, Any], log: str) -> None:
    assert answer["fired"], f"the kill point was never reached: {answer}\n{log}"
    assert answer["signal"] == signal.SIGKILL, (answer, log)


# --------------------------------------------------------------------------- the test


def _ends(answer: dict[str, Any]) -> tuple[int | None, int | None, float]:
    return answer["exit"], answer["signal"], answer["seconds"]


def test_killed_runs_lose_nothing_and_the_next_run_resumes(lab: Lab, capsys):
    began = time.monotonic()

    # 1. The reference.
    reference_dir = lab.root / "reference"
    answer, log = lab.run(reference_dir)
    assert answer["exit"] == pytest.ExitCode.OK, log
    total, read = embedded(log)
    assert read == 0 and total > 20
    (entry,) = (reference_dir / "cache" / "results").glob("*.json")
    reference = Reference(
        json=without_speed((reference_dir / "out" / "results.json").read_bytes()),
        saved=without_time(saved_run_path(reference_dir).read_bytes()),
        entry=without_speed(entry.read_bytes()),
        rows=store_rows(reference_dir / "cache"),
    )
    assert len(reference.rows) == total
    assert not re.search(rb'"(seconds|duration|elapsed|time|timestamp|saved_at)"', reference.json)
    assert temps(reference_dir) == []

    shared = Shared(lab.root / "shared", reference)
    shared.seed_previous_outputs()
    rows = 0
    kills = 0

    # 2. Store phase.
    for n, when, sig in STORE_PLAN:
        answer, log = lab.run(
            shared.where, {"point": "insert", "n": n, "when": when, "signal": sig}
        )
        if sig == "SIGKILL":
            assert_killed(answer, log)
            kills += 1
        else:
            assert_interrupted(answer, log)
        rows += n if when == "after" else n - 1
        shared.check_store(rows)
        assert shared.entries() == [], "an interrupted run left a results entry"
        assert shared.json.read_bytes() == PREVIOUS_JSON
        assert shared.saved.read_bytes() == PREVIOUS_RUN
        assert [t for t in temps(shared.where) if t.parent.name != COUNTS] == []
        lab.history.append((f"{sig} at write {n} of embeddings, {when}", *_ends(answer), rows))
    assert 0 < rows < total

    # 3. Output phase: its first run embeds what the store lacks, then is killed writing.
    targets = {
        "entry": str(shared.cache / "results" / "*.json"),
        "json": str(shared.json),
        "saved": str(shared.saved),
    }
    for output, when, sig in OUTPUT_PLAN:
        shared.seed_previous_outputs()
        kill = {"point": "write", "match": targets[output], "n": 1, "when": when, "signal": sig}
        answer, log = lab.run(shared.where, kill)
        if sig == "SIGKILL":
            assert_killed(answer, log)
            kills += 1
        else:
            assert_interrupted(answer, log)
        if rows < total:  # the phase's first run: it embeds exactly what the store lacks
            assert embedded(log) == (total - rows, rows)
            rows = total
        shared.check_store(total)
        shared.check_outputs()
        left = temps(shared.where)
        if sig == "SIGKILL" and when in ("torn", "before"):
            (temp,) = left  # the killed write's, and only it: earlier ones were removed
            assert temp.parent == Path(targets[output]).parent
            content = temp.read_bytes()
            if when == "torn":  # half a file: what a kill mid-write leaves, never renamed
                assert content, temp
                with pytest.raises(ValueError):
                    json.loads(content)
            elif output == "saved":
                assert without_time(content) == reference.saved
            else:
                expected = {"entry": reference.entry, "json": reference.json}[output]
                assert without_speed(content) == expected
        else:
            assert left == [], left
        written = {
            "entry": bool(shared.entries()),
            "json": shared.json.read_bytes() != PREVIOUS_JSON,
            "saved": shared.saved.read_bytes() != PREVIOUS_RUN,
        }
        assert written[output] == (when == "after" and sig == "SIGKILL"), (output, when, sig)
        lab.history.append((f"{sig} writing {output}, {when}", *_ends(answer), len(left)))

    # 4. The final run: completes, changes nothing that was right, leaves no temporary file.
    answer, log = lab.run(shared.where)
    assert answer["exit"] == pytest.ExitCode.OK, log
    assert "results reused from an identical earlier run" in log, log
    assert without_speed(shared.json.read_bytes()) == reference.json
    assert without_time(shared.saved.read_bytes()) == reference.saved
    assert [without_speed(e.read_bytes()) for e in shared.entries()] == [reference.entry]
    assert store_rows(shared.cache) == reference.rows
    assert temps(shared.where) == []
    assert kills >= 20

    with capsys.disabled():
        print(
            f"\n[interrupted runs] {lab.runs} runs, {kills} SIGKILL + 2 SIGINT, "
            f"{time.monotonic() - began:.0f} s; (what, exit code, signal, seconds, rows or temps): "
            f"{lab.history}"
        )
