"""benchmarks/bench_batch_budget.py: the figure behind the CPU token budget, from one command.

The script runs in this interpreter (tests/conftest.py's ``bench_script``).
"""

from __future__ import annotations

import json

import pytest


def test_the_budget_bench_times_each_budget_against_the_largest(tmp_path, bench_script, capsys):
    out = tmp_path / "budget.json"
    argv = ["--texts=12", "--budgets=512,128", "--lengths=30", "--repeat=1", f"--json={out}"]
    assert bench_script("bench_batch_budget").main(argv) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["budget"], r["per_batch"]) for r in rows] == [(512, 16), (128, 4)]
    assert rows[0]["relative"] == 1.0 and rows[1]["relative"] > 0
    assert all(r["seconds"] > 0 and r["cpu_seconds"] > 0 for r in rows)
    assert "budget    128 (  4 per batch)" in capsys.readouterr().out


def test_a_bad_budget_is_a_usage_error(bench_script, capsys):
    with pytest.raises(SystemExit) as stopped:
        bench_script("bench_batch_budget").main(["--budgets=4k"])
    assert stopped.value.code == 2 and "--budgets" in capsys.readouterr().err
