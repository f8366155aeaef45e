"""benchmarks/bench_static_load.py: the figure behind "a static model folder is read once"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_static_load.py"


def test_the_bench_times_a_read_and_a_load_from_the_memo(tmp_path: Path):
    out = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--repeat=1", f"--json={out}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["read"] > 0 and row["again"] > 0
    assert row["ratio"] == row["again"] / row["read"]
    assert "packaged-static: read " in done.stdout and "ratio again/read: " in done.stdout


def test_a_model_that_is_not_a_static_folder_is_refused(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--model=packaged-minilm"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2 and "--model=packaged-minilm: not a model2vec folder" in done.stderr
