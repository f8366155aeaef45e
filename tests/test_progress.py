"""Progress of the long phases: live bars on a terminal, lines in logs, a heartbeat, -q too."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_niah.progress import PERIOD_ENV, ConsoleProgress, heartbeat_period, seconds_text

RUN = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:xdist",
    "--niah-model=lexical:tfidf",
    "--niah-lengths=128,256",
    "--niah-positions=2",
    "--niah-groups=dietary-01",
    "--niah-arms=literal",
    "--niah-no-cache",
]


STATIC = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:xdist",
    "--niah-model=packaged-static",
    "--niah-lengths=128,256",
    "--niah-positions=2",
    "--niah-groups=dietary-01,location-01",
    "--niah-arms=literal",
    "--niah-no-cache",
]
HEARTBEAT = re.compile(
    r"pytest-niah: (.+ so far\)|building and embedding haystacks: \d+/\d+ blocks, .+ left|"
    r"building and embedding haystacks: all \d+ blocks done)"
)


def test_outside_a_terminal_a_phase_says_when_it_starts_and_ends():
    stream = io.StringIO()
    progress = ConsoleProgress(stream)
    assert not progress.bars
    progress.start("embedding", 10, "texts")
    progress.advance(4, tokens=400)
    progress.advance(6, tokens=600)
    progress.finish("0 read from the cache")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "pytest-niah: embedding: 10 texts to do"
    assert re.fullmatch(
        r"pytest-niah: embedding: 10 texts in \d+\.\d s, [\d,]+ tokens/s; 0 read from the cache",
        lines[1],
    ), lines
    assert len(lines) == 2


def test_the_heartbeat_speaks_after_each_silent_period():
    stream = io.StringIO()
    progress = ConsoleProgress(stream, period=0.1)
    progress.begin("loading the model")
    time.sleep(0.6)
    progress.start("embedding", 4, "blocks")
    progress.advance(1, tokens=1000)
    time.sleep(0.6)
    progress.stop()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "pytest-niah: loading the model"
    assert (
        sum(
            bool(re.fullmatch(r"pytest-niah: loading the model \(\d+ s so far\)", x)) for x in lines
        )
        >= 2
    )
    periodic = [x for x in lines if x.startswith("pytest-niah: embedding: 1/4 blocks, ")]
    assert len(periodic) >= 2, lines
    assert re.search(r"[\d,]+ tokens/s, about \d+ s left$", periodic[0]), periodic
    count = len(stream.getvalue().splitlines())
    time.sleep(0.3)
    assert len(stream.getvalue().splitlines()) == count, "stop() ends the heartbeat"


def test_the_time_left_comes_from_the_weights_not_the_count():
    progress = ConsoleProgress(io.StringIO(), period=60)
    # Four blocks; the last weighs as much as the three before it together (a long length).
    progress.start("embedding", 4, "blocks", weights=[1, 1, 1, 3])
    time.sleep(0.2)
    progress.advance(3)
    left = progress.seconds_left()
    elapsed = time.perf_counter() - progress._started
    assert left is not None and left == pytest.approx(elapsed, rel=0.2)  # not elapsed / 3
    unweighted = ConsoleProgress(io.StringIO(), period=60)
    unweighted.start("embedding", 4, "blocks")
    assert unweighted.seconds_left() is None  # nothing done yet: no estimate


def test_heartbeat_periods_terminal_log_and_override():
    assert heartbeat_period(True, {}) == 10 and heartbeat_period(False, {}) == 30
    assert heartbeat_period(False, {PERIOD_ENV: "0.5"}) == 0.5
    assert heartbeat_period(True, {PERIOD_ENV: "nonsense"}) == 10
    assert [seconds_text(s) for s in (4.6, 65, 3725)] == ["5 s", "1 min 05 s", "1 h 02 min"]


def run_on_a_terminal(args: list[str], folder: Path, **env_vars: str) -> str:
    """Run with stdout and stderr on a pseudo-terminal; return what it showed."""
    main, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIAH_")}
    env |= {"COLUMNS": "120", "TERM": "xterm", "HF_HUB_OFFLINE": "1", **env_vars}
    proc = subprocess.Popen(args, cwd=folder, stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    chunks = []
    while True:
        ready, _, _ = select.select([main], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(main, 65536)
        except OSError:  # the terminal closed: the run ended
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_shows_a_live_bar_per_phase(tmp_path):
    shown = run_on_a_terminal(RUN, tmp_path)
    assert "pytest-niah: building and embedding haystacks" in shown, shown
    # tqdm draws with carriage returns and a percentage or a rate while it runs.
    assert "\r" in shown and re.search(r"\d+%\||it/s| blocks/s|blocks\]", shown), shown


def test_a_terminal_shows_the_heartbeat_from_collection_to_the_summary_with_q(tmp_path):
    shown = run_on_a_terminal([*STATIC, "-q"], tmp_path, **{PERIOD_ENV: "0.2"})
    assert "passed" in shown, shown
    lines = [x.strip() for x in re.split(r"[\r\n]+", shown)]
    assert "pytest-niah: packaged-static: loading inputs, locating models" in lines, shown
    assert any(HEARTBEAT.search(x) for x in lines), shown
    assert "pytest-niah: building and embedding haystacks" in shown  # the bar, -q too
    # Nothing is said after the summary began: the heartbeat ended with the phases.
    summary = shown.index("pytest-niah: packaged-static ==")
    assert "so far)" not in shown[summary:]


def outside_xdist() -> dict[str, str]:
    """This process's environment without pytest-xdist's worker variables (under -n 2 the
    child would take itself for a worker, and pytest-benchmark warns on stderr)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}


def test_a_log_gets_one_line_per_phase(tmp_path):
    done = subprocess.run(
        RUN, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=outside_xdist()
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("pytest-niah: ") for line in lines), done.stderr
    # The phase says when it starts and when it ends (with its time); no heartbeat at 30 s.
    phase = [line for line in lines if "building and embedding haystacks" in line]
    assert len(phase) == 2 and phase[0].endswith(" blocks to do") and " in " in phase[1], lines
    assert "\r" not in done.stderr


def test_a_log_gets_a_periodic_line_with_done_total_and_the_rate(tmp_path):
    env = {k: v for k, v in outside_xdist().items() if not k.startswith("NIAH_")}
    env |= {PERIOD_ENV: "0.2", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [*STATIC, "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    starts = [
        x
        for x in lines
        if re.fullmatch(r"pytest-niah: building and embedding haystacks: \d+ blocks to do", x)
    ]
    assert len(starts) == 1, lines
    periodic = [x for x in lines if HEARTBEAT.fullmatch(x)]
    assert periodic, done.stderr
    assert re.search(r"blocks in [\d.]+ s", done.stderr)
