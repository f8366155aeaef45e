"""Text forms of results for a report: the markdown summary and the per-case CSV."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Sequence

from pytest_niah.measure.records import CaseResult, EffectiveLength
from pytest_niah.report.terminal import length_columns
from pytest_niah.results.niah_results import NiahResults


def length_cells(results: NiahResults, arm: str, scoring: str) -> tuple[list[str], list[list[str]]]:
    """The per-length table of one arm and scoring as a header and formatted rows.

    Args:
        results: The results to tabulate.
        arm: Which arm.
        scoring: Which scoring.

    Returns:
        The column names and one list of cells per length.
    """
    columns = length_columns(results, arm, scoring)
    header = [name for name, _ in columns]
    body = [[cell(row) for _, cell in columns] for row in results.rows("length", arm, scoring)]
    return header, body


def effective_length_text(effective: EffectiveLength | None) -> str:
    """One phrase for an effective context length (empty when it was not computed)."""
    if effective is None:
        return ""
    if effective.length is None:
        return "none (fails at the shortest length)"
    return f"{effective.length} tokens"


def markdown_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured markdown table whose columns line up in a terminal.

    Every column holds numbers, so every column is right-aligned.
    """
    cells = [[_escape_cell(c) for c in line] for line in [header, *body]]
    widths = [max(3, *(len(line[i]) for line in cells)) for i in range(len(header))]
    rule = ["-" * (w - 1) + ":" for w in widths]

    def line(parts: Sequence[str]) -> str:
        return "| " + " | ".join(p.rjust(w) for p, w in zip(parts, widths, strict=True)) + " |"

    return [line(cells[0]), line(rule), *(line(row) for row in cells[1:])]


def summary_markdown(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    """The report's markdown summary: a section per model, a table per arm and scoring.

    Args:
        results: One results object per model.
        labels: The display name of each, same order.

    Returns:
        Markdown text ending in a newline.
    """
    lines = ["# pytest-niah report", ""]
    for label, result in zip(labels, results, strict=True):
        lines += _model_section(label, result)
    return "\n".join(lines).rstrip("\n") + "\n"


def cases_csv(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    """Every case of every model as CSV: a ``model`` column, then the ``CaseResult`` fields.

    Floats keep full precision (``repr``); a missing ``problem`` is an empty cell.
    """
    fields = [f.name for f in dataclasses.fields(CaseResult)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model", *fields])
    for label, result in zip(labels, results, strict=True):
        for case in result.cases:
            writer.writerow([label, *(getattr(case, name) for name in fields)])
    return buffer.getvalue()


def _model_section(label: str, results: NiahResults) -> list[str]:
    config = results.config
    lines = [
        f"## {label}",
        "",
        f"Model `{results.model.name}` (fingerprint `{results.model.fingerprint[:12]}`), "
        f"{window_text(results)}; seed {config.seed}, {config.positions} positions, "
        f"orders {', '.join(config.orders)}.",
        "",
    ]
    for arm, scoring in results.variants:
        header, body = length_cells(results, arm, scoring)
        lines += [f"### {label}: arm {arm}, scoring {scoring}", ""]
        lines += markdown_table(header, body)
        effective = effective_length_text(results.effective_length(arm, scoring))
        if effective:
            lines += ["", f"Effective length: {effective}."]
        lines.append("")
    return lines


def window_text(results: NiahResults) -> str:
    """How much of a haystack the model reads, as a phrase."""
    window = results.model.max_tokens
    return "reads every token" if window is None else f"reads {window} tokens"


def _escape_cell(text: str) -> str:
    # A bare pipe would end the cell early in GitHub's renderer.
    return text.replace("|", "\\|")
