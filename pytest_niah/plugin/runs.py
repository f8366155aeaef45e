"""What the plugin does before the first test: find every problem, then run each model.

A shard job embeds its share and writes a part file; any other run computes each model's
results once (:meth:`~pytest_niah.plugin.session.NiahSession.results`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_niah.errors import NiahError

if TYPE_CHECKING:
    from pytest_niah.plugin.session import NiahSession
    from pytest_niah.progress import ConsoleProgress


def problems_before_running(session: NiahSession) -> list[tuple[str, NiahError]]:
    """Load every model's inputs and identify its model, collecting every problem.

    Run before the first experiment, so that a corpus that will not download and a
    model that cannot be found are both reported by one run, not one per run.
    """
    found: list[tuple[str, NiahError]] = []
    for label in session.labels:
        try:
            session.inputs(label)
        except NiahError as exc:
            found.append((label, exc))
        if session.settings.from_shards:
            continue  # the gate job of a sharded run loads no model
        try:
            session.embedder(label).identity  # noqa: B018 - locates the model, no load
        except NiahError as exc:
            found.append((label, exc))
    return found


def write_shard(session: NiahSession, label: str) -> Path:
    """Embed this job's share of one model's inputs and write its part file."""
    from pytest_niah.experiment.shards import Shard, run_shard

    shard = session.settings.shard
    if shard is None:
        raise RuntimeError("pytest-niah: not a shard job")
    part = run_shard(
        session.configs[label],
        Shard(*shard),
        session.settings.parts_dir(label, several=len(session.configs) > 1),
        embedder=session.embedder(label),
        inputs=session.inputs(label),
        cache_dir=session.settings.cache.root,
        use_cache=session.settings.cache.enabled,
        progress=session.state.progress,
    )
    session.state.written.append(part)
    return part


def export_haystacks(session: NiahSession) -> Path:
    """``--niah-export-haystacks``: every model's haystacks, one JSON line each."""
    from pytest_niah.experiment.haystack_export import exported_lines
    from pytest_niah.files import write_atomic

    lines = [
        line
        for label in session.labels
        for line in exported_lines(
            label,
            session.configs[label],
            session.embedder(label),
            session.inputs(label),
            session.settings.cache.sentence_counts,
        )
    ]
    return write_atomic(session.settings.export_haystacks, "".join(lines))


def run_before_tests(niah: NiahSession, progress: ConsoleProgress, running: list[str]) -> None:
    """Check every model's inputs, then run (or embed a shard of) each, saying what it does."""
    from pytest_niah.errors import numbered_problems

    progress.begin(f"{', '.join(niah.labels)}: loading inputs, locating models")
    problems = problems_before_running(niah)
    if len(problems) > 1:
        listed = numbered_problems([f"{label!r}: {exc}" for label, exc in problems])
        niah.state.stopped = f"pytest-niah could not run: {listed}"
        progress.stop()
        pytest.exit(niah.state.stopped, returncode=pytest.ExitCode.USAGE_ERROR)
    if problems:
        running[0], exc = problems[0]
        raise exc
    if any(niah.baselines.baseline(label) is not None for label in niah.labels):
        from pytest_niah.plugin.baseline_check import check_baseline

        progress.begin(f"{', '.join(niah.labels)}: checking the baseline")
        for label in niah.labels:
            running[0] = label
            check_baseline(niah, label)  # refused before any haystack is built
    for label in niah.labels:
        running[0] = label
        if niah.settings.shard is not None:
            index, count = niah.settings.shard
            progress.begin(f"{label}: embedding shard {index}/{count}")
            write_shard(niah, label)
            continue
        progress.begin(f"{label}: loading the model, or the results of an identical run")
        niah.results(label)
        niah.comparison(label)  # a baseline that measured something else stops here
    if niah.settings.export_haystacks:
        progress.begin(f"writing the haystacks to {niah.settings.export_haystacks}")
        export_haystacks(niah)
