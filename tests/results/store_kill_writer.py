"""Saves runs into a run store over and over until killed: a fork server for the kill loop.

Started by tests/results/test_storage_kills.py. It imports pytest-niah once, builds two
synthetic results, prints ``ready``, then reads one JSON request per line on stdin and
answers each with one JSON line on stdout:

- ``{"op": "loop", "store": DIR, "round": N}``: forks a child that saves forever into the
  store ``DIR``, alternating a new run ``round-N-I`` (created, never replacing: the
  exclusive save) and the run ``kept`` (replaced: ``overwrite``), printing ``w`` just
  before each save; answers ``{"pid": PID}`` at once. The parent kills the child.
- ``{"op": "reap", "pid": PID}``: waits for that child; answers ``{"signal": S}``.

Not a test module; it only runs as a script.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABEL = "model-a"
KEPT = "kept"
SAVED_AT = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
COMMIT = {"id": "0" * 40, "branch": "main", "dirty": False}
GRID = {"lengths": (1024, 2048, 4096), "positions": 12}


def _say(line: str) -> None:
    os.write(1, (line + "\n").encode())


def main() -> None:
    sys.path.insert(0, str(HERE))
    import niah_synthetic as synthetic

    from pytest_niah.results.storage import RunStore

    versions = []
    for seed in (0, 1):
        cases, negatives = synthetic.scored(seed=seed, **GRID)  # type: ignore[arg-type]
        versions.append(synthetic.results(cases, negatives, **GRID))
    _say("ready")
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "reap":
            _, status = os.waitpid(request["pid"], 0)
            _say(json.dumps({"signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0}))
            continue
        store, round_ = Path(request["store"]), request["round"]
        pid = os.fork()
        if pid:
            _say(json.dumps({"pid": pid}))
            continue
        index = 0
        while True:  # the child: killed by the parent
            run = versions[index % 2]
            name, overwrite = (KEPT, True) if index % 2 else (f"round-{round_}-{index}", False)
            _say("w")
            RunStore(store).save(
                run, name, label=LABEL, now=SAVED_AT, commit=COMMIT, overwrite=overwrite
            )
            index += 1


if __name__ == "__main__":
    main()
