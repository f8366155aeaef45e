"""Runs pytest-niah sessions that kill themselves at exact points: a fork server.

Started once by tests/robustness/test_interrupted_run.py. It imports pytest, torch,
sentence-transformers and pytest-niah, prints ``ready``, then reads one JSON request per
line on stdin. For each it forks a child that runs ``pytest.main(args)`` in ``cwd`` with
``env`` added and its output in ``log``; the child sends itself ``signal`` at the point
``kill`` names. The parent waits and answers with one JSON line: ``{"pid", "exit",
"signal", "fired"}`` (``exit`` is None when a signal ended the child; ``fired`` says whether
the kill point was reached). Forking saves each run the 5-20 s of importing torch, and the
kill points are code paths, not timings, so every run is killed at the same place on a
loaded machine as on an idle one.

Kill points (``kill``):

- ``{"point": "insert", "n": N, "when": W}``: the N-th write of embeddings to the store
  (one transaction per batch): W ``before`` it begins, ``uncommitted`` after the rows are
  written but before COMMIT, or ``after`` it committed.
- ``{"point": "write", "match": GLOB, "n": N, "when": W}``: the N-th atomic file write
  (:func:`pytest_niah.files.write_atomic`) whose target path matches GLOB: W ``torn`` (its
  temporary file cut to half, as a kill while writing leaves it), ``before`` the rename
  (temporary file whole), or ``after`` the rename.

This file is not a test module; it only runs as a script.
"""

from __future__ import annotations

import fnmatch
import json
import os
import signal
import sys
import time
from typing import Any

# Everything heavy, once, before any fork (nothing here starts a thread or runs a model).
import pytest
import sentence_transformers  # noqa: F401
import torch  # noqa: F401

import pytest_niah.embed.st_backend
import pytest_niah.experiment
import pytest_niah.results.storage  # noqa: F401
from pytest_niah.embed import store, store_schema

TMP_MARK = ".niah-tmp-"


class KillPoint:
    """Counts the calls of one code path and ends this process at the chosen one."""

    def __init__(self, spec: dict[str, Any], sig: signal.Signals, fired_file: str) -> None:
        self.spec = spec
        self.sig = sig
        self.fired_file = fired_file
        self.calls = 0

    def reached(self, when: str) -> bool:
        return self.calls == self.spec["n"] and self.spec["when"] == when

    def fire(self) -> None:
        with open(self.fired_file, "w") as out:
            out.write(json.dumps(self.spec))
        os.kill(os.getpid(), self.sig)
        # SIGINT: Python raises KeyboardInterrupt in the main thread at its next check;
        # waiting here makes that check happen in this frame, at this point.
        time.sleep(60)

    def install(self) -> None:
        if self.spec["point"] == "insert":
            self._install_insert()
        elif self.spec["point"] == "write":
            self._install_write()
        else:
            raise ValueError(f"unknown kill point {self.spec!r}")

    def _install_insert(self) -> None:
        original_insert = store.insert_rows
        original_exit = store_schema.Transaction.__exit__
        inside = [False]

        def insert(conn: Any, rows: Any) -> int:
            self.calls += 1
            if self.reached("before"):
                self.fire()
            inside[0] = True
            try:
                written = original_insert(conn, rows)
            finally:
                inside[0] = False
            if self.reached("after"):
                self.fire()
            return written

        def exit_(txn: Any, exc_type: Any, exc: Any, tb: Any) -> None:
            if inside[0] and exc_type is None and self.reached("uncommitted"):
                self.fire()
            original_exit(txn, exc_type, exc, tb)

        store.insert_rows = insert  # type: ignore[assignment]
        store_schema.Transaction.__exit__ = exit_  # type: ignore[method-assign,assignment]

    def _install_write(self) -> None:
        original_replace = os.replace

        def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            ours = TMP_MARK in os.path.basename(os.fspath(src))
            if ours and fnmatch.fnmatch(os.fspath(dst), self.spec["match"]):
                self.calls += 1
                if self.reached("torn"):
                    size = os.path.getsize(src)
                    with open(src, "r+b") as half:
                        half.truncate(size // 2)
                    self.fire()
                if self.reached("before"):
                    self.fire()
                original_replace(src, dst, *args, **kwargs)
                if self.reached("after"):
                    self.fire()
                return
            original_replace(src, dst, *args, **kwargs)

        os.replace = replace  # type: ignore[assignment]


def child(request: dict[str, Any]) -> None:
    """Runs in the forked child: never returns."""
    code = 70
    try:
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(request["cwd"])
        for name in [n for n in os.environ if n.startswith("NIAH_")]:
            del os.environ[name]
        os.environ.update(request["env"])
        kill = request.get("kill")
        if kill:
            sig = signal.Signals[kill.get("signal", "SIGKILL")]
            KillPoint(kill, sig, request["log"] + ".fired").install()
        code = int(pytest.main(request["args"]))
    except KeyboardInterrupt:  # what `python -m pytest` does with one pytest lets through
        import traceback

        traceback.print_exc()
        code = 128 + signal.SIGINT
    except BaseException as exc:  # report, never fall back into the server loop
        print(f"kill_driver: the child failed: {exc!r}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    # Ctrl-C as at a terminal, also when the suite was started where SIGINT is ignored
    # (a background job of a script): Python then leaves it ignored in its children.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(request)
        _, status = os.waitpid(pid, 0)
        fired = os.path.exists(request["log"] + ".fired")
        answer = {
            "pid": pid,
            "exit": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "fired": fired,
        }
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
