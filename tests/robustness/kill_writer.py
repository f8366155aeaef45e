"""Writes one kind of pytest-niah output over and over until it is killed: a fork server.

Started by tests/robustness/test_kill_each_output.py. It imports pytest-niah (and
matplotlib, syrupy) once, builds two distinct valid versions A and B of every output's
content, prints ``ready``, then reads one JSON request per line on stdin and answers each
with one JSON line on stdout:

- ``{"op": "reference", "kind": K, "folder": F}``: writes version A into ``F/A`` and B into
  ``F/B`` through the package's writer of kind K; answers how long the second (warm) writer
  call took (``call_s``), how long its slowest single file write took (``write_s``) and
  how many file writes one call makes (``writes``).
- ``{"op": "loop", "kind": K, "out": DIR, "first": 0 or 1, "start": N}``: forks a child
  that prints ``ready`` and then writes K into ``DIR`` forever, alternating between the two
  versions, ``first`` first; answers ``{"pid": PID}`` at once. Just before each file write
  (each :func:`pytest_niah.files.write_atomic` call, or each ``put_many`` of the cache) the
  child prints ``w``, so the parent can aim a kill into a write. The parent kills the child.
- ``{"op": "reap", "pid": PID}``: waits for that child; answers ``{"signal", "exit"}``.
- ``{"op": "once", "kind": K, "out": DIR, "versions": [0, 1], "start": N}``: forks a child
  that writes those versions in order and exits; answers ``{"signal", "exit"}`` when done.

The kinds, each through the package's real writer:

- ``results``: :meth:`NiahResults.save` to ``DIR/results.json``;
- ``report``: :func:`pytest_niah.report.write_report` into ``DIR`` (report.html,
  results.json, cases.csv, summary.md);
- ``saved``: :meth:`pytest_niah.results.storage.RunStore.save` with ``overwrite`` into the store
  ``DIR`` (fixed save time and commit, so both versions are byte-stable);
- ``snapshot``: the snapshot extension's atomic serializer
  (:func:`pytest_niah.results.snapshots.extension_for`), merging into
  ``DIR/test_niah_snapshot.ambr`` as syrupy does;
- ``cache``: :meth:`EmbeddingStore.put_many` of fresh keys into ``DIR/embeddings.sqlite``,
  one transaction of :data:`BATCH` rows at a time, keys ``k00000000``, ``k00000001``, ...
  from ``start``, the vector of key N being :func:`vector_of` N; between two writes the
  child pauses :data:`EMBED_PAUSE_S` (what a run spends embedding the next batch).

The announcing wrapper around ``write_atomic`` only prints and times; the bytes are written
by the package's own function. Forking saves each kill the imports; each version's
figures are drawn once, in the server, and reused by its forks. The results are synthetic
(tests/results/niah_synthetic.py), two seeds of one grid. This file is not a test module;
it only runs as a script.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
KINDS = ("results", "report", "saved", "snapshot", "cache")
SNAPSHOT_FILE = "test_niah_snapshot.ambr"
CACHE_FILE = "embeddings.sqlite"
SPACE = "kill-test/query"
DIM = 32
BATCH = 128
EMBED_PAUSE_S = 0.004
SAVE_NAME = "kept"
LABEL = "model-a"
SNAPSHOT_LABELS = 150  # snapshot entries per file: a file of about 200 kB
SAVED_AT = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
COMMIT = {"id": "0" * 40, "branch": "main", "dirty": False}


def key_of(index: int) -> str:
    return f"k{index:08d}"


def vector_of(index: int) -> np.ndarray:
    """The vector stored under key ``index``: unique to it, exact in float32."""
    return np.arange(DIM, dtype=np.float32) + np.float32(index)


# --------------------------------------------------------------------------- the server

ANNOUNCE = False
WRITE_TIMES: list[float] = []


def _say(line: str) -> None:
    """One line to stdout, unbuffered: the parent reads it at once; forks never repeat it."""
    os.write(1, (line + "\n").encode())


def _announcing(original: Callable[..., Path]) -> Callable[..., Path]:
    def write_atomic(path: Any, data: Any, **options: Any) -> Path:
        if ANNOUNCE:
            _say("w")
        started = time.perf_counter()
        try:
            return original(path, data, **options)
        finally:
            WRITE_TIMES.append(time.perf_counter() - started)

    return write_atomic


def _install_figure_memo() -> None:
    """Render each run's figures once, in the server: its forks inherit them.

    Drawing is deterministic (versions A and B are byte-stable), so the report's bytes are
    the same; a child's call then spends its time writing files, not drawing. Without this
    a report call took seconds under load and most kills landed while it drew.
    """
    import pytest_niah.report.figures as figures

    draw = figures.render_figures
    drawn: dict[tuple[Any, ...], Any] = {}

    def render_figures(results: Any, labels: Any) -> Any:
        key = (*map(id, results), *labels)
        if key not in drawn:
            drawn[key] = draw(results, labels)
        return drawn[key]

    figures.render_figures = render_figures  # type: ignore[assignment]


def _install_announcer() -> None:
    """Wrap write_atomic where each writer looks it up (before the snapshot class is built)."""
    import pytest_niah.files
    import pytest_niah.report
    import pytest_niah.results.niah_results
    import pytest_niah.results.storage

    wrapped = _announcing(pytest_niah.files.write_atomic)
    for module in (
        pytest_niah.files,
        pytest_niah.report,
        pytest_niah.results.niah_results,
        pytest_niah.results.storage,
    ):
        module.write_atomic = wrapped  # type: ignore[attr-defined]


class Writers:
    """The two versions of every output, and one write of each."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HERE.parent / "results"))
        import niah_synthetic as synthetic
        from syrupy.extensions.amber.serializer import AmberDataSerializer

        from pytest_niah.results.snapshots import metric_table

        grid = {"lengths": (1024, 2048, 4096), "positions": 12}
        self.results = []
        for seed in (0, 1):
            cases, negatives = synthetic.scored(seed=seed, **grid)  # type: ignore[arg-type]
            self.results.append(synthetic.results(cases, negatives, **grid))
        self.snapshots = []
        for run in self.results:
            table = AmberDataSerializer.serialize(metric_table(run))
            entries = {f"test_metric_table[{LABEL}-{i:03d}]": table for i in range(SNAPSHOT_LABELS)}
            entries["test_other"] = AmberDataSerializer.serialize("kept as it is")
            self.snapshots.append(entries)

    def draw_figures(self) -> None:
        """Draw each version's report figures now (the memo keeps them), not in a timed call."""
        import pytest_niah.report.figures as figures

        for run in self.results:
            figures.render_figures([run], [LABEL])

    def write(self, kind: str, out: Path, version: int) -> None:
        getattr(self, f"_{kind}")(out, version)

    def _results(self, out: Path, version: int) -> None:
        self.results[version].save(out / "results.json")

    def _report(self, out: Path, version: int) -> None:
        from pytest_niah.report import write_report

        write_report([self.results[version]], out, labels=[LABEL], step_summary=False)

    def _saved(self, out: Path, version: int) -> None:
        from pytest_niah.results.storage import RunStore

        RunStore(out).save(
            self.results[version],
            SAVE_NAME,
            label=LABEL,
            now=SAVED_AT,
            commit=COMMIT,
            overwrite=True,
        )

    def _snapshot(self, out: Path, version: int) -> None:
        from syrupy.data import Snapshot, SnapshotCollection

        from pytest_niah.results.snapshots import extension_for

        extension = extension_for(out)
        collection = SnapshotCollection(location=str(out / SNAPSHOT_FILE))
        for name, data in self.snapshots[version].items():
            collection.add(Snapshot(name=name, data=data))
        out.mkdir(parents=True, exist_ok=True)
        extension.serializer_class.write_file(collection, merge=True)


def cache_loop(out: Path, start: int, batches: int | None) -> None:
    """Put ``batches`` batches of fresh keys from ``start`` (forever with None), then close."""
    from pytest_niah.embed.store import EmbeddingStore

    store = EmbeddingStore(out / CACHE_FILE)
    index, done = start, 0
    while batches is None or done < batches:
        keys = [key_of(i) for i in range(index, index + BATCH)]
        vectors = np.stack([vector_of(i) for i in range(index, index + BATCH)])
        time.sleep(EMBED_PAUSE_S)
        if ANNOUNCE:
            _say("w")
        started = time.perf_counter()
        store.put_many(SPACE, keys, vectors)
        WRITE_TIMES.append(time.perf_counter() - started)
        index += BATCH
        done += 1
    store.close()


def _child(work: Callable[[], None]) -> int:
    """Fork a child that runs ``work`` then exits 0 (1 on an exception); return its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        work()
        code = 0
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(code)
    return 0  # unreachable


def _ended(pid: int) -> dict[str, Any]:
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status), "exit": None}
    return {"signal": None, "exit": os.WEXITSTATUS(status)}


def serve() -> None:
    _install_announcer()
    _install_figure_memo()
    writers = Writers()
    _say("ready")
    for line in sys.stdin:
        request = json.loads(line)
        op, kind = request["op"], request.get("kind")
        if op == "reference":
            folder = Path(request["folder"])
            calls, writes = [], []
            if kind == "report":
                writers.draw_figures()  # timed below: writing only, as in the children
            WRITE_TIMES.clear()
            for version, name in enumerate("AB"):
                started, before = time.perf_counter(), len(WRITE_TIMES)
                if kind == "cache":
                    cache_loop(folder / name, 0, 2)
                else:
                    writers.write(kind, folder / name, version)
                calls.append(time.perf_counter() - started)
                writes.append(len(WRITE_TIMES) - before)
            # The second call: the first may pay for a cold start (fonts, caches).
            answer = {"call_s": calls[-1], "write_s": max(WRITE_TIMES), "writes": max(writes)}
            _say(json.dumps(answer))
        elif op == "loop":
            out, first, start = Path(request["out"]), request["first"], request["start"]

            def loop(
                out: Path = out, first: int = first, start: int = start, kind: str = kind
            ) -> None:
                global ANNOUNCE
                ANNOUNCE = True
                _say("ready")
                if kind == "cache":
                    cache_loop(out, start, None)
                version = first
                while True:
                    writers.write(kind, out, version)
                    version = 1 - version

            _say(json.dumps({"pid": _child(loop)}))
        elif op == "reap":
            _say(json.dumps(_ended(request["pid"])))
        elif op == "once":
            out, versions, start = Path(request["out"]), request["versions"], request["start"]

            def once(
                out: Path = out,
                versions: list[int] = versions,
                start: int = start,
                kind: str = kind,
            ) -> None:
                if kind == "cache":
                    cache_loop(out, start, len(versions))
                else:
                    for version in versions:
                        writers.write(kind, out, version)

            _say(json.dumps(_ended(_child(once))))
        else:
            raise ValueError(f"unknown request {request!r}")


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    serve()
