"""Under pytest-xdist the experiment runs once per machine and gives the same bytes."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("xdist")

# Counts, per process, how often the experiment really runs (the session module imports
# run_experiment from pytest_niah.experiment at call time, so patching the module works).
COUNTER = """
import os
from pathlib import Path

import pytest_niah.experiment as engine

_real = engine.run_experiment

def _counted(*args, **kwargs):
    with Path(os.environ["NIAH_TEST_RUN_LOG"]).open("a") as log:
        log.write(f"{os.getpid()}\\n")
    return _real(*args, **kwargs)

engine.run_experiment = _counted
"""


def _run(niah, monkeypatch, workers: str, name: str):
    log = niah.pytester.path / f"{name}.log"
    monkeypatch.setenv("NIAH_TEST_RUN_LOG", str(log))
    result = niah.run(
        "-p",
        "niah_counter",  # a plugin: a run of the grid alone loads no conftest of the project
        "-n",
        workers,
        f"--niah-json={name}.json",
        f"--basetemp={niah.pytester.path / ('tmp-' + name)}",
        f"--niah-cache-dir={niah.pytester.path / ('cache-' + name)}",  # both compute afresh
        subprocess=True,
    )
    runs = log.read_text().splitlines() if log.exists() else []
    return result, runs


def test_same_outcomes_and_bytes_with_and_without_workers(niah, monkeypatch):
    niah.pytester.makepyfile(niah_counter=COUNTER)
    serial, serial_runs = _run(niah, monkeypatch, "0", "serial")
    parallel, parallel_runs = _run(niah, monkeypatch, "2", "parallel")

    expected = {"passed": niah.n_cases // 2 + niah.n_gates, "xfailed": niah.n_cases // 2}
    serial.assert_outcomes(**expected)
    parallel.assert_outcomes(**expected)
    parallel.stdout.fnmatch_lines(["*2 workers*"])

    serial_bytes = (niah.pytester.path / "serial.json").read_bytes()
    assert serial_bytes == (niah.pytester.path / "parallel.json").read_bytes()
    assert json.loads(serial_bytes)["config"]["lengths"] == [128, 256]

    # The experiment ran once in each run, whatever the worker count ...
    assert len(serial_runs) == 1
    assert len(parallel_runs) == 1
    # ... and left one shared results file (and one note of how the run went).
    shared = sorted((niah.pytester.path / "tmp-parallel").rglob("niah-lexical-tfidf-*.json"))
    assert [p.name.endswith(".run.json") for p in shared] == [False, True]
    assert shared[0].read_bytes() == serial_bytes
    for result in (serial, parallel):
        assert "results reused" not in result.stdout.str()
        result.stdout.fnmatch_lines(["150 texts embedded, 0 read from the cache (cache *)"])

    # Both summaries show the same table.
    assert niah.tables(serial) == niah.tables(parallel)
