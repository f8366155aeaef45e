"""Progress of the long phases: live bars on a terminal, a line per phase in logs, none with -q."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from pytest_niah.progress import ConsoleProgress

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO.parent / "shared" / "corpus" / "gutenberg"
RUN = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:xdist",
    "--niah-model=lexical:tfidf",
    f"--niah-corpus={SHARED_CORPUS}",
    "--niah-lengths=128,256",
    "--niah-positions=2",
    "--niah-groups=dietary-01",
    "--niah-arms=literal",
    "--niah-no-cache",
]


def test_outside_a_terminal_each_phase_is_one_line():
    stream = io.StringIO()
    progress = ConsoleProgress(stream)
    assert not progress.bars
    progress.start("embedding", 10, "texts")
    progress.advance(4, tokens=400)
    progress.advance(6, tokens=600)
    progress.finish("0 read from the cache")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert re.fullmatch(
        r"pytest-niah: embedding: 10 texts in \d+\.\d s, [\d,]+ tokens/s; 0 read from the cache",
        lines[0],
    ), lines


def run_on_a_terminal(args: list[str], folder: Path) -> str:
    """Run with stdout and stderr on a pseudo-terminal; return what it showed."""
    main, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIAH_")}
    env |= {"COLUMNS": "120", "TERM": "xterm", "HF_HUB_OFFLINE": "1"}
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


def test_quiet_runs_show_no_progress(tmp_path):
    shown = run_on_a_terminal([*RUN, "-q"], tmp_path)
    assert "passed" in shown
    assert "building and embedding haystacks" not in shown, shown


def test_a_log_gets_one_line_per_phase(tmp_path):
    done = subprocess.run(RUN, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    phase_lines = [line for line in done.stderr.splitlines() if line.startswith("pytest-niah: ")]
    assert phase_lines and all(" in " in line for line in phase_lines), done.stderr
    assert "\r" not in done.stderr
