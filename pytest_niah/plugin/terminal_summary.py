"""The terminal summary of a run: per model, tables, gate details, the run, the comparison."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from pytest_niah.measure.gate_reasons import suggest_gates
from pytest_niah.measure.records import MetricRow
from pytest_niah.plugin.session import NiahSession
from pytest_niah.report.comparison_table import comparison_table
from pytest_niah.report.measured_window import window_note
from pytest_niah.report.speed_text import NOT_RECORDED, speed_line, speed_test_line
from pytest_niah.report.terminal_tables import length_table, notes, title
from pytest_niah.results.niah_results import NiahResults

if TYPE_CHECKING:
    from pytest_niah.experiment.run_report import RunReport


def summary_lines(session: NiahSession, label: str, results: NiahResults) -> list[str]:
    """The terminal summary of one model: tables, gate details, the run, the comparison."""
    lines: list[str] = []
    for arm, scoring in results.variants:
        lines.append(title(label, results, arm, scoring))
        details: list[str] = []
        cells: dict[int, str] = {}
        for row in results.rows("length", arm, scoring):
            gates = session.gates(label, row, results)
            cells[row.length] = gates.cell
            details.extend(
                f"  L{row.length} {g.outcome.upper()} {g.message()}"
                for g in gates
                if g.outcome != "pass"
            )
        lines.extend(
            "  " + line for line in length_table(results, arm, scoring, gate=_cell_of(cells))
        )
        lines.extend(notes(results, arm, scoring))
        lines.extend(details)
    measured = window_note(results.model)
    if measured is not None:
        lines.append(f"note: {measured}")
    report = session.run_report(label)
    reused = report is not None and report.reused
    speed = speed_line(results, reused=reused)
    if speed is None and session.settings.speed and reused:
        speed = NOT_RECORDED  # --niah-speed on results reused from a run without it
    if speed is not None:  # before what the run did, which comes last
        lines.append(speed)
    tests = {n: info for (name, n), info in session.state.speed_tests.items() if name == label}
    measured_speed = speed_test_line(tests)
    if measured_speed is not None:
        lines.append(measured_speed)
    if report is not None:
        lines.extend(run_lines(report))
    comparison = session.comparison(label)
    if comparison is not None:
        said = f" ({comparison.title_notes})" if comparison.title_notes else ""
        lines.append(f"{label} versus {session.baselines.source(label)}{said}:")
        lines.extend(
            "  " + line for line in comparison_table(comparison, session.settings.compare_fail)
        )
    return lines


def _cell_of(cells: dict[int, str]) -> Callable[[MetricRow], str]:
    return lambda row: cells[row.length]


def run_lines(report: RunReport) -> list[str]:
    """The run's notes, then what it embedded (a served model's check texts included)."""
    lines = [f"note: {note}" for note in report.notes]
    if report.from_shards is not None:
        lines.append(f"measured from the shard parts in {report.from_shards}: nothing embedded")
    reused = report.reuse_line()
    if reused is not None:
        lines.append(reused)
    lines.append(report.embedded_line())  # every run ends with it, reused or not
    return lines


def ungated_line(session: NiahSession, finished: dict[str, NiahResults]) -> str | None:
    """One line when the run gated nothing: it checked nothing; the gates it supports.

    A run without ``--niah-min-auc``, ``--niah-min-ratio`` or ``--niah-compare-fail``
    passes whatever the model does (a model at chance too). The line says so, and gives
    the gates its own results support (:func:`gate_suggestion`).

    Returns:
        The line, or ``None`` when some length is gated (or nothing finished).
    """
    lengths = sorted({n for results in finished.values() for n in results.config.lengths})
    if not finished or any(session.gated(length) for length in lengths):
        return None
    head = "pytest-niah: nothing was gated (no threshold, no baseline allowance): this run checked"
    return f"{head} nothing. {gate_suggestion(finished)}"


def gate_suggestion(finished: Mapping[str, NiahResults]) -> str:
    """The gates these results support, or why they support none (:func:`suggest_gates`)."""
    return suggest_gates({label: results.intervals for label, results in finished.items()})
