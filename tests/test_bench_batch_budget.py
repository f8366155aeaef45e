"""benchmarks/bench_batch_budget.py: the figure behind the CPU token budget, from one command.

The script runs in this interpreter (torch imported already), its folder first on
``sys.path``, as when it runs as a script.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("bench_batch_budget")


def test_the_budget_bench_times_each_budget_against_the_largest(tmp_path, monkeypatch, capsys):
    out = tmp_path / "budget.json"
    argv = ["--texts=12", "--budgets=512,128", "--lengths=30", "--repeat=1", f"--json={out}"]
    assert bench(monkeypatch).main(argv) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["budget"], r["per_batch"]) for r in rows] == [(512, 16), (128, 4)]
    assert rows[0]["relative"] == 1.0 and rows[1]["relative"] > 0
    assert all(r["seconds"] > 0 and r["cpu_seconds"] > 0 for r in rows)
    assert "budget    128 (  4 per batch)" in capsys.readouterr().out


def test_a_bad_budget_is_a_usage_error(monkeypatch, capsys):
    with pytest.raises(SystemExit) as stopped:
        bench(monkeypatch).main(["--budgets=4k"])
    assert stopped.value.code == 2 and "--budgets" in capsys.readouterr().err
