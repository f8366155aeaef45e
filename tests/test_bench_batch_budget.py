"""benchmarks/bench_batch_budget.py: the figure behind the CPU token budget, from one command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_batch_budget.py"


def test_the_budget_bench_times_each_budget_against_the_largest(tmp_path: Path):
    out = tmp_path / "budget.json"
    command = [sys.executable, str(SCRIPT), "--texts=12", "--budgets=512,128", "--lengths=30",
               "--repeat=1", f"--json={out}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["budget"], r["per_batch"]) for r in rows] == [(512, 16), (128, 4)]
    assert rows[0]["relative"] == 1.0 and rows[1]["relative"] > 0
    assert all(r["seconds"] > 0 and r["cpu_seconds"] > 0 for r in rows)
    assert "budget    128 (  4 per batch)" in done.stdout


def test_a_bad_budget_is_a_usage_error(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--budgets=4k"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "--budgets" in done.stderr
