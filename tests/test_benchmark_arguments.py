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
    ("make_seed_standins.py", ["out", "--only", "v5"], "--only: unknown stand-in(s) v5"),
    ("make_seed_standins.py", ["out", "--size", "huge"], "--size: invalid choice: 'huge'"),
    # Found (issue 43, item 8): tracebacks, endless reads, late failures, negative counts.
    ("gates_report.py", ["missing.json"], "RESULT missing.json: does not exist"),
    ("gates_report.py", ["/dev/zero"], "RESULT /dev/zero: not a regular file"),
    ("gates_report.py", ["/"], "RESULT /: is a folder"),
    ("bench_grid.py", ["--json", "/dev/full"], "--json /dev/full: is not a regular file"),
    ("bench_gates.py", ["--json", "/dev/full"], "--json /dev/full: is not a regular file"),
    ("bench_long.py", ["--json", "/dev/full"], "--json /dev/full: is not a regular file"),
    ("bench_static_load.py", ["--json", "/dev/full"], "--json /dev/full: is not a regular"),
    ("bench_batch_budget.py", ["--json", "/dev/full"], "--json /dev/full: is not a regular"),
    ("bench_speed_spread.py", ["--json", "/dev/full"], "--json /dev/full: is not a regular"),
    ("bench_speed_spread.py", ["--runs", "-1"], "--runs: -1 is too small"),
    ("mutate.py", ["--stop-after", "-1"], "--stop-after: -1 is too small"),
    ("mutate.py", ["--jobs", "0"], "--jobs: 0 is too small"),
    ("mutate.py", ["--timeout", "nan"], "--timeout: nan is too small"),
    ("mutate.py", ["--report", "/dev/full"], "--report /dev/full: is not a regular file"),
    ("bench_gates.py", ["--cache-dir", "/dev/null"], "--cache-dir /dev/null: is not a folder"),
    ("make_long_standin.py", ["/dev/null"], "OUT_DIR /dev/null: is not a folder"),
    ("bench_gpu.py", ["--standin-dir", "/dev/null"], "--standin-dir /dev/null: is not a folder"),
    ("bench_gpu.py", ["--standin-tool", "no-tool.py"], "--standin-tool no-tool.py: does not"),
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


def run_script(script: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *argv],
        capture_output=True, text=True, timeout=60, cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip


def test_gates_report_refuses_a_bad_docs_page_before_writing(tmp_path):
    result = REPO / "benchmarks" / "results" / "gates-calibration-full-2cpu.json"
    done = run_script("gates_report.py", str(result), "--docs", "missing.md", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--docs missing.md: does not exist" in done.stderr
    page = tmp_path / "page.md"
    page.write_text("no block here\n")
    done = run_script("gates_report.py", str(result), "--docs", str(page), cwd=tmp_path)
    assert done.returncode == 2 and "the page has no block" in done.stderr
    assert page.read_text() == "no block here\n"


def test_bench_gates_makes_a_relative_cache_folder_absolute(tmp_path, bench_script, monkeypatch):
    # Found: --cache-dir cache (relative) failed after the baseline had run.
    monkeypatch.chdir(tmp_path)
    args = bench_script("bench_gates").parse_args(["--small", "--cache-dir", "cache"])
    assert args.cache_dir == tmp_path / "cache" and args.cache_dir.is_absolute()
