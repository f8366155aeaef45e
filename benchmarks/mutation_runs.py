"""How ``mutate.py`` runs a mutant and reports: each in a fresh copy of the checkout.

A mutant is *killed* when its module's tests fail, *survives* when they pass, and *times
out* when they run past ``--timeout`` (counted apart, not as a kill).
The copy is first on ``PYTHONPATH`` and is the working directory, so pytester subprocesses
import the mutant too; the checkout itself is never written.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mutation_operators import Mutant, apply, module_path


def snapshot_head(target: Path, root: Path) -> Path:
    """The committed tree (``git archive HEAD``) at ``target``: edits in progress in the
    working tree cannot break a baseline and pass for kills."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=root, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _copy_checkout(target: Path, source: Path) -> None:
    ignore = shutil.ignore_patterns(
        ".git",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        "*.egg-info",
        ".pytest_cache",
        ".niah",
        "mutants",
    )
    shutil.copytree(source, target, ignore=ignore, symlinks=True)


def run_one(
    mutant: Mutant | None, spec: object, tests: list[str], timeout: float, source: Path
) -> tuple[str, float]:
    """Run one mutant's tests in a fresh copy of ``source``; 'killed', 'survived' or
    'timeout'. ``mutant=None`` runs them unmutated (the baseline: it must survive)."""
    with tempfile.TemporaryDirectory(prefix="niah-mutant-") as tmp:
        work = Path(tmp) / "checkout"
        _copy_checkout(work, source)
        if mutant is not None:
            path = module_path(work, mutant.module)
            path.write_text(
                apply(path.read_text(encoding="utf-8"), mutant.index, spec), encoding="utf-8"
            )
        env = dict(
            os.environ, PYTHONPATH=str(work), HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1"
        )
        # A test may be a node id (file::name); one whose file is gone is left out.
        existing = [t for t in tests if (work / t.split("::")[0]).exists()]
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            *existing,
        ]
        started = time.perf_counter()
        returncode = _run_group(command, work, env, timeout)
        outcome = {None: "timeout", 0: "survived"}.get(returncode, "killed")
        return outcome, time.perf_counter() - started


def _run_group(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> int | None:
    """``command``'s exit status, ``None`` past ``timeout``. It runs in a process group of
    its own, ended whole on a timeout or an interrupt: a test's own subprocesses (pytester,
    a writer killed on purpose) would otherwise outlive it."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


Job = tuple[str, Mutant | None, object, list[str]]  # module, mutant (None: unmutated), spec, tests


def run_all(
    jobs: list[Job],
    timeout: float,
    source: Path,
    workers: int,
    done: Callable[[Job, str, float], None],
    stop_at: float = float("inf"),
) -> None:
    """Run every job on ``workers`` threads, in order, calling ``done(job, outcome, seconds)``
    as each ends; a job not started by ``stop_at`` (``time.monotonic``) ends 'not run'."""

    def one(job: Job) -> tuple[str, float]:
        if time.monotonic() > stop_at:
            return "not run", 0.0
        return run_one(job[1], job[2], job[3], timeout, source)

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(one, job): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            done(futures[future], *future.result())


def _counts(mutants: set[Mutant], outcomes: dict[Mutant, str]) -> tuple[int, int, int]:
    """Killed by a failing test, timed out, survived."""
    found = [outcomes[m] for m in mutants]
    return found.count("killed"), found.count("timeout"), found.count("survived")


def tally(name: str, mutants: set[Mutant], outcomes: dict[Mutant, str]) -> str:
    """One sample's line: killed, timed out and survived apart, and the score (a timeout is
    not a kill: no test failed, the run only ran past ``--timeout``)."""
    killed, timed_out, survived = _counts(mutants, outcomes)
    score = 100 * killed / len(mutants) if mutants else 0.0
    return (
        f"{name}: {killed} killed, {timed_out} timed out, {survived} survived of "
        f"{len(mutants)}: {killed}/{len(mutants)} ({score:.1f}%) killed by a failing test"
    )


def report(
    modules: list[str],
    samples: dict[str, set[Mutant]],
    outcomes: dict[Mutant, str],
) -> str:
    """Per module, each sample's killed / mutants and score with its timeouts in a column of
    their own (a timeout is not counted as a kill), then each sample's tally, the survivors
    and the mutants that timed out.

    The first sample is the fresh one; any others are earlier seeds re-scored.
    """
    names = list(samples)
    head = "| module | " + " | ".join(f"{n} | timed out" for n in names) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(names)]

    def cells(mutants: set[Mutant], total: bool = False) -> str:
        if not mutants:
            return "- | -"
        killed, timed_out, _ = _counts(mutants, outcomes)
        score = f"{100 * killed / len(mutants):.{1 if total else 0}f}%"
        text = f"{killed}/{len(mutants)} ({score})"
        return f"**{text}** | **{timed_out}**" if total else f"{text} | {timed_out}"

    for module in modules:
        row = [cells({m for m in samples[n] if m.module == module}) for n in names]
        if any(c != "- | -" for c in row):
            lines.append(f"| {module} | " + " | ".join(row) + " |")
    lines.append("| **all** | " + " | ".join(cells(samples[n], total=True) for n in names) + " |")
    lines += ["", *(f"- {tally(n, samples[n], outcomes)}" for n in names)]

    def listed(outcome: str) -> str:
        found = [
            f"- `{m.module}:{m.line}` {m.description} ("
            + ", ".join(n for n in names if m in samples[n])
            + ")"
            for m in sorted(outcomes, key=lambda m: (m.module, m.line, m.index, m.description))
            if outcomes[m] == outcome
        ]
        return "\n".join(found) or "- none"

    return (
        "\n".join(lines)
        + "\n\nSurvivors:\n"
        + listed("survived")
        + "\n\nTimed out (not counted as killed):\n"
        + listed("timeout")
        + "\n"
    )
