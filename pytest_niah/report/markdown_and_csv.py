"""Text forms of results for a report: the markdown summary and the per-case CSV."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Sequence

from pytest_niah.measure.records import CaseResult
from pytest_niah.report.comparison import ReportComparison
from pytest_niah.report.comparison_table import COMPARISON_TEXT_COLUMNS
from pytest_niah.report.escape import csv_cell, md_cell, md_text
from pytest_niah.report.headline import (
    METRIC_COLUMNS,
    GateOutcome,
    comparison_outcomes,
    headline,
    shown_path,
    worst,
)
from pytest_niah.report.measured_window import measured_suffix, window_note
from pytest_niah.report.speed_text import speed_markdown
from pytest_niah.report.terminal_tables import (
    draws_text,
    effective_length_of,
    length_columns,
    note_texts,
    window_text,
)
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


def markdown_table(
    header: Sequence[str], body: Sequence[Sequence[str]], *, left: int = 0
) -> list[str]:
    """A GitHub-flavoured markdown table whose columns line up in a terminal.

    Every cell is escaped (:func:`~pytest_niah.report.escape.md_cell`): a ``|``, a line
    break or markup in a cell stays text. The first ``left`` columns are left-aligned, the
    others (numbers) right-aligned.
    """
    cells = [[md_cell(c) for c in line] for line in [header, *body]]
    widths = [max(3, *(len(line[i]) for line in cells)) for i in range(len(header))]
    rule = [":" + "-" * (w - 1) if i < left else "-" * (w - 1) + ":" for i, w in enumerate(widths)]

    def line(parts: Sequence[str]) -> str:
        padded = (
            p.ljust(w) if i < left else p.rjust(w)
            for i, (p, w) in enumerate(zip(parts, widths, strict=True))
        )
        return "| " + " | ".join(padded) + " |"

    return [line(cells[0]), line(rule), *(line(row) for row in cells[1:])]


def summary_markdown(
    results: Sequence[NiahResults],
    labels: Sequence[str],
    comparisons: Sequence[ReportComparison] = (),
    *,
    gates: Sequence[GateOutcome] | None = None,
    inconclusive: str = "auto",
    collapse: bool | None = None,
) -> str:
    """The report's markdown summary: a headline, comparisons, then a section per model.

    Fit for ``summary.md``, the GitHub step summary and a pull-request comment: it opens
    with one headline line (✅ / ⚠️ / ❌ and the gate counts, :func:`headline`), every text
    that came from the user is escaped, paths under the current folder are shown relative
    to it, and the gated metrics come first: each model's gated lengths in a short table,
    the comparison rows a gate looked at, with the rest folded in ``<details>`` blocks.

    Args:
        results: One results object per model.
        labels: The display name of each, same order.
        comparisons: Each model's comparison with its baseline, if any.
        gates: Every gate's outcome (the plugin's gate tests); ``None`` counts the
            comparisons' ``--niah-compare-fail`` verdicts (the command line's gates).
        inconclusive: The policy that turns a comparison verdict into an outcome when
            ``gates`` is ``None``.
        collapse: Put each model's per-length tables in a ``<details>`` block; ``None``
            collapses them when anything was gated or compared (then the headline).

    Returns:
        Markdown text ending in a newline.
    """
    every_gate = (
        list(gates) if gates is not None else comparison_outcomes(comparisons, inconclusive)
    )
    fold = bool(comparisons or every_gate) if collapse is None else collapse
    # A baseline run of the model under test is no second model: count model identities.
    models = len({r.model.fingerprint for r in results})
    lines = [f"# {headline(labels, every_gate, models=models)}", ""]
    for comparison in comparisons:
        lines += comparison_markdown(comparison)
    for label, result in zip(labels, results, strict=True):
        mine = [g for g in every_gate if g.label == label]
        lines += _model_section(label, result, mine, collapse=fold)
    return "\n".join(lines).rstrip("\n") + "\n"


def comparison_markdown(comparison: ReportComparison, level: int = 2) -> list[str]:
    """A comparison as markdown lines: heading, pairing, table, verdicts, accepted differences.

    The table has the terminal comparison table's columns (arm, scoring, length, cells,
    metric, baseline, current, change, 95% CI, verdict). With gates, it holds the gated
    rows, and the others follow in a collapsed ``<details>`` block.
    """
    header, body = comparison.cells()
    verdict = len(header) - 1
    gated = [row for row in body if row[verdict]]
    rest = [row for row in body if not row[verdict]] if gated else []
    lines = [f"{'#' * level} Comparison: {md_text(shown_title(comparison))}", ""]
    lines += [md_text(comparison.paired_text()), ""]
    counts = comparison.counts_text()
    if counts:
        lines += [md_text(counts), ""]
    lines += markdown_table(header, gated or body, left=COMPARISON_TEXT_COLUMNS)
    lines.append("")
    if rest:
        lines += [f"<details><summary>Metrics not gated ({len(rest)} rows)</summary>", ""]
        lines += markdown_table(header, rest, left=COMPARISON_TEXT_COLUMNS)
        lines += ["", "</details>", ""]
    verdicts = comparison.verdict_texts()
    allowed = comparison.allowed_texts()
    for text in comparison.notes():
        lines += [f"Note: {md_text(text)}.", ""]
    if verdicts:
        lines += [f"- {md_text(text)}" for text in verdicts] + [""]
    if allowed:
        lines += [f"Accepted differences: {md_text('; '.join(allowed))}.", ""]
    return lines


def shown_title(comparison: ReportComparison) -> str:
    """``LABEL versus BASELINE``, the baseline's path relative to the current folder.

    Where the two runs measured different windows or read different tokens, the title
    says so in parentheses (:attr:`Comparison.title_notes`).
    """
    baseline = shown_path(comparison.baseline)
    title = f"{comparison.label} versus {baseline}" if baseline else comparison.label
    notes = comparison.comparison.title_notes
    return f"{title} ({notes})" if notes else title


def gated_cells(
    results: NiahResults, gates: Sequence[GateOutcome]
) -> tuple[list[str], list[list[str]]]:
    """The gated lengths of one model: variant, length, each gated metric, the gate's outcome."""
    metrics = list(dict.fromkeys(g.metric for g in gates))
    body: list[list[str]] = []
    header: list[str] = []
    for arm, scoring in results.variants:
        columns = length_columns(results, arm, scoring)
        chosen = [
            (name, cell)
            for metric in metrics
            for name, cell in columns
            if name.startswith(METRIC_COLUMNS.get(metric, metric))
        ]
        header = ["variant", "length", *(name for name, _ in chosen), "gate"]
        for row in results.rows("length", arm, scoring):
            here = [g for g in gates if (g.arm, g.scoring, g.length) == (arm, scoring, row.length)]
            if here:
                cells = [cell(row) for _, cell in chosen]
                outcome = worst([g.outcome for g in here])
                # A warn or fail says why: the reason of the first gate with that outcome.
                why = next((g.reason for g in here if g.outcome == outcome and g.reason), "")
                verdict = f"{outcome}: {md_text(why)}" if why else outcome
                body.append([f"{arm}/{scoring}", str(row.length), *cells, verdict])
    return header, body


def step_summary_markdown(
    results: Sequence[NiahResults],
    labels: Sequence[str],
    comparisons: Sequence[ReportComparison] = (),
    *,
    gates: Sequence[GateOutcome] | None = None,
    inconclusive: str = "auto",
) -> str:
    """The text for the GitHub step summary: :func:`summary_markdown`, as summary.md has it."""
    return summary_markdown(results, labels, comparisons, gates=gates, inconclusive=inconclusive)


def cases_csv(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    """Every case of every model as CSV: a ``model`` column, then the ``CaseResult`` fields.

    Floats keep full precision (``repr``); a missing ``problem`` is an empty cell. Text
    cells that a spreadsheet would run as a formula get a leading ``'``
    (:func:`~pytest_niah.report.escape.csv_cell`); numbers stay numbers.
    """
    fields = [f.name for f in dataclasses.fields(CaseResult)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model", *fields])
    for label, result in zip(labels, results, strict=True):
        for case in result.cases:
            row = [label, *(getattr(case, name) for name in fields)]
            writer.writerow([csv_cell(value) for value in row])
    return buffer.getvalue()


def _model_section(
    label: str, results: NiahResults, gates: Sequence[GateOutcome], *, collapse: bool = False
) -> list[str]:
    config = results.config
    lines = [
        f"## {md_text(label)}",
        "",
        f"Model {md_text(shown_path(results.model.name))} (fingerprint "
        f"{md_text(results.model.fingerprint[:12])}), {window_text(results)}"
        f"{measured_suffix(results.model)}; {draws_text(results)}, {config.positions} positions, "
        f"orders {md_text(', '.join(config.orders))}.",
        "",
    ]
    measured = window_note(results.model)
    if measured is not None:
        lines += [f"Note: {md_text(measured)}.", ""]
    if gates:
        header, body = gated_cells(results, gates)
        if body:
            lines += ["Gated lengths:", "", *markdown_table(header, body, left=1), ""]
    if collapse:
        lines += ["<details><summary>Per-length tables</summary>", ""]
    for arm, scoring in results.variants:
        header, body = length_cells(results, arm, scoring)
        lines += [f"### {md_text(label)}: arm {md_text(arm)}, scoring {md_text(scoring)}", ""]
        lines += markdown_table(header, body)
        for text in note_texts(results, arm, scoring):  # a paragraph each
            lines += ["", f"Note: {md_text(text)}."]
        effective = effective_length_of(results, arm, scoring)
        if effective:
            lines += ["", f"Effective length: {effective}."]
        lines.append("")
    speed = speed_markdown(results)
    if speed:
        lines += [f"### {md_text(label)}: speed (model time, never gated)", "", *speed, ""]
    if collapse:
        lines += ["</details>", ""]
    return lines
