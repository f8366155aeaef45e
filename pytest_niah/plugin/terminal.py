"""The terminal summary of a run: per model, tables, gate details, the run, the comparison."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pytest_niah.measure.records import MetricRow
from pytest_niah.plugin.session import Gate, NiahSession
from pytest_niah.report.terminal import comparison_table, length_table, notes, title
from pytest_niah.results.niah_results import NiahResults


def gate_cell(gates: Sequence[Gate]) -> str:
    """The table's gate column: the worst outcome of a length's gates."""
    if not gates:
        return "-"
    outcomes = {g.outcome for g in gates}
    return "FAIL" if "fail" in outcomes else "warn" if "warn" in outcomes else "pass"


def summary_lines(session: NiahSession, label: str, results: NiahResults) -> list[str]:
    """The terminal summary of one model: tables, gate details, the run, the comparison."""
    lines: list[str] = []
    for arm, scoring in results.variants:
        lines.append(title(label, results, arm, scoring))
        details: list[str] = []
        cells: dict[int, str] = {}
        for row in results.rows("length", arm, scoring):
            gates = session.gates(label, row, results) if session.gated(row.length) else []
            cells[row.length] = gate_cell(gates)
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
    report = session.run_report(label)
    if report is not None:
        lines.extend(_run_lines(report))
    comparison = session.comparison(label)
    if comparison is not None:
        lines.append(f"{label} versus {session.baseline_source(label)}:")
        lines.extend("  " + line for line in comparison_table(comparison, session.compare_fail))
    return lines


def _cell_of(cells: dict[int, str]) -> Callable[[MetricRow], str]:
    return lambda row: cells[row.length]


def _run_lines(report: dict[str, Any]) -> list[str]:
    lines = [f"note: {note}" for note in report.get("notes") or []]
    if report.get("from_shards"):
        lines.append(f"measured from the shard parts in {report['from_shards']}: nothing embedded")
        return lines
    if report.get("reused"):
        lines.append(
            "results reused from an identical earlier run "
            f"({report.get('cached_results')}): nothing embedded"
        )
        return lines
    stats = report.get("embedding") or {}
    assert isinstance(stats, dict)
    where = f" (cache {report['cache']})" if report.get("cache") else ""
    lines.append(
        f"{stats.get('embedded', 0):,} texts embedded, {stats.get('read', 0):,} read from the "
        f"cache{where}"
        + (
            f"; {stats['dropped']} unusable cache rows embedded again"
            if stats.get("dropped")
            else ""
        )
    )
    return lines
