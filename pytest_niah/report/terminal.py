"""Plain-text tables of per-length metrics, for the terminal summary."""

from __future__ import annotations

from collections.abc import Callable

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.display import fmt, signed
from pytest_niah.measure.records import MetricRow, RetrievalRow
from pytest_niah.results.compare import Comparison, metric_digits
from pytest_niah.results.niah_results import NiahResults

Cell = Callable[[MetricRow], str]


def length_columns(results: NiahResults, arm: str, scoring: str) -> list[tuple[str, Cell]]:
    """The per-length columns of one arm and scoring (terminal table and report share them).

    Args:
        results: The results to read intervals and retrieval rows from.
        arm: The arm of the rows the cells will format.
        scoring: The scoring of those rows.

    Returns:
        ``(header, cell)`` pairs; ``cell`` formats one per-length row.
    """
    retrieval = {r.length: r for r in results.retrieval if (r.arm, r.scoring) == (arm, scoring)}

    def auc_cell(row: MetricRow) -> str:
        interval = results.interval(arm, row.length, "auc", scoring)
        if interval is None:
            return fmt(row.auc)
        return f"{fmt(row.auc)} [{fmt(interval.low, 2)},{fmt(interval.high, 2)}]"

    def retrieved(row: MetricRow, field: str) -> str:
        found: RetrievalRow | None = retrieval.get(row.length)
        return fmt(None if found is None else getattr(found, field))

    return [
        ("length", lambda r: f"{r.length}"),
        ("norm.sim", lambda r: fmt(r.normalized)),
        ("ratio", lambda r: fmt(r.comparative_ratio)),
        ("AUC [95% CI]", auc_cell),
        ("separation", lambda r: fmt(r.separation, 4)),
        ("effect", lambda r: fmt(r.effect_size, 2)),
        ("acc@1", lambda r: retrieved(r, "acc_at_1")),
        ("MRR", lambda r: retrieved(r, "mrr")),
        ("found", lambda r: f"{r.found}"),
        ("missed", lambda r: f"{r.missed}"),
        ("truncated", lambda r: f"{r.truncated}"),
    ]


def length_table(
    results: NiahResults,
    arm: str,
    scoring: str = "whole",
    gate: Callable[[MetricRow], str] | None = None,
) -> list[str]:
    """Aligned lines: a header, then one row per length; ``gate`` adds a status column."""
    columns: list[tuple[str, Cell]] = length_columns(results, arm, scoring)
    if gate is not None:
        columns.append(("gate", gate))
    header = [name for name, _ in columns]
    body = [[cell(r) for _, cell in columns] for r in results.rows("length", arm, scoring)]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    return [
        "  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True))
        for line in [header, *body]
    ]


def title(label: str, results: NiahResults, arm: str, scoring: str = "whole") -> str:
    """One line naming the model, arm, scoring, the model's window and the effective length."""
    window = results.model.max_tokens
    seen = "reads every token" if window is None else f"reads {window} tokens"
    effective = results.effective_length(arm, scoring)
    if effective is None:
        eff = ""
    elif effective.length is None:
        eff = ", effective length: none (fails at the shortest length)"
    else:
        eff = f", effective length {effective.length}"
    return f"{label} ({results.model.name}), arm {arm}, scoring {scoring}: {seen}{eff}"


def comparison_table(comparison: Comparison) -> list[str]:
    """Aligned lines for the terminal: a header, then one row per delta."""
    header = ["arm", "scoring", "length", "metric", "baseline", "current", "delta", "95% CI"]
    body = []
    for d in comparison.deltas:
        digits = metric_digits(d.metric)
        ci = f"[{signed(d.low, digits - 1)}, {signed(d.high, digits - 1)}]"
        body.append(
            [
                d.arm,
                d.scoring,
                str(d.length),
                METRIC_LABELS[d.metric],
                fmt(d.baseline, digits),
                fmt(d.current, digits),
                signed(d.delta, digits),
                ci,
            ]
        )
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    text_columns = 4  # arm, scoring, length, metric read left to right; numbers align right
    return [
        "  ".join(
            cell.ljust(w) if i < text_columns else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [header, *body]
    ]
