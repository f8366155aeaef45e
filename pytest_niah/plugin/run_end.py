"""The hooks of a run's end: the terminal summary, and the files the run writes.

Registered by :mod:`pytest_niah.plugin.hooks` (its ``pytest_plugins``).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_niah.plugin.active_session import active_session, shared_dir


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Per model: tables, what the run did, comparisons; then the files written.

    Any output that could not be written is printed last, with its cause.
    """
    session = active_session(config)
    if session is None or session.state.stopped or hasattr(config, "workerinput"):
        return  # a stopped run printed its one cause already
    shared_dir(config)
    finished = {label: r for label in session.labels if (r := session.stored_results(label))}
    if finished:
        from pytest_niah.plugin.terminal_summary import summary_lines, ungated_line

        for label, results in finished.items():
            terminalreporter.write_sep("=", f"pytest-niah: {label}")
            for line in summary_lines(session, label, results):
                terminalreporter.write_line(line)
        ungated = ungated_line(session, finished) if session.settings.shard is None else None
        if ungated:
            terminalreporter.write_line(ungated, yellow=True, bold=True)
    if session.settings.shard is not None and session.state.written:
        index, count = session.settings.shard
        terminalreporter.write_sep("=", f"pytest-niah: shard {index}/{count}")
        for path in session.state.written:
            terminalreporter.write_line(f"part written: {path}")
    elif session.state.written:
        from pytest_niah.plugin.outputs import written_line

        terminalreporter.write_sep("=", "pytest-niah: files written")
        for path in session.state.written:
            terminalreporter.write_line(written_line(path))
    for problem in session.state.output_errors:
        terminalreporter.write_line(f"pytest-niah: {problem}", red=True, bold=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write ``--niah-json`` files, saved runs and reports from the controller (or only process).

    An output that cannot be written makes the run fail (exit code 4) with its cause,
    after every other output was written.
    """
    niah = active_session(session.config)
    if niah is None:
        return
    niah.close()
    if (
        niah.state.stopped
        or hasattr(session.config, "workerinput")
        or niah.settings.shard is not None
    ):
        return
    shared_dir(session.config)
    from pytest_niah.plugin.outputs import write_outputs

    niah.state.output_errors = write_outputs(niah)
    if niah.state.output_errors and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
