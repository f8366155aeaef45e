"""The benchmark scripts' arguments: a bad value is one usage error (exit 2), never a
traceback, and an unwritable ``--json``/``--out`` is found before any work (issue 33, item 5).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UNWRITABLE = "/proc/niah-no-such-dir/out"  # /proc takes no new file, not even root's

CASES = [
    ("bench_grid.py", ["--positions", "-5"], "--positions: -5 is too small"),
    ("bench_grid.py", ["--lengths", "abc"], "--lengths: 'abc' is not a whole number"),
    ("bench_grid.py", ["--groups", "../../etc"], "--groups: "),
    ("bench_grid.py", ["--skip", "z"], "--skip: unknown step(s) z"),
    ("bench_grid.py", ["--repeat", "0"], "--repeat: 0 is too small"),
    ("bench_grid.py", ["--json", f"{UNWRITABLE}.json"], f"--json {UNWRITABLE}.json: "),
    ("bench_gates.py", ["--groups", "../../etc"], "--groups: "),
    ("bench_gates.py", ["--positions", "0"], "--positions: 0 is too small"),
    ("bench_gates.py", ["--allowance", "foo"], "--allowance: 'foo' has no ':'"),
    ("bench_gates.py", ["--budget-s", "-1"], "--budget-s: -1.0 is not a positive number"),
    ("bench_gates.py", ["--json", f"{UNWRITABLE}.json"], f"--json {UNWRITABLE}.json: "),
    ("bench_long.py", ["--lengths", "abc"], "--lengths: 'abc' is not a whole number"),
    ("bench_long.py", ["--json", f"{UNWRITABLE}.json"], f"--json {UNWRITABLE}.json: "),
    ("readme_speed_figure.py", ["--out", "/proc/x.png"], "--out /proc/x.png: cannot be written"),
    ("readme_speed_figure.py", ["--lengths", "5"], "--lengths: 5 is out of range"),
    ("bench_gpu.py", ["--json", f"{UNWRITABLE}.json"], f"--json {UNWRITABLE}.json: "),
]


@pytest.mark.parametrize(("script", "argv", "message"), CASES, ids=lambda v: str(v)[:40])
def test_a_bad_argument_is_a_usage_error_before_any_work(tmp_path, script, argv, message):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *argv],
        capture_output=True,
        text=True,
        timeout=60,  # the work itself takes minutes: only a check before it ends this soon
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"{script}: error: " in done.stderr or "bench_gates: " in done.stderr
    assert message in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written
