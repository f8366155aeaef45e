"""Plain-text tables of per-length metrics, for the terminal summary."""

from __future__ import annotations

import math
from collections.abc import Callable

from .results import MetricRow, NiahResults


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table: fixed digits, ``nan`` for missing."""
    return "nan" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def length_table(
    results: NiahResults,
    arm: str,
    scoring: str = "whole",
    gate: Callable[[MetricRow], str] | None = None,
) -> list[str]:
    """Aligned lines: a header, then one row per length; ``gate`` adds a status column."""
    retrieval = {r.length: r for r in results.retrieval if (r.arm, r.scoring) == (arm, scoring)}

    def auc_cell(r: MetricRow) -> str:
        interval = results.interval(arm, r.length, "auc", scoring)
        if interval is None:
            return fmt(r.auc)
        return f"{fmt(r.auc)} [{fmt(interval.low, 2)},{fmt(interval.high, 2)}]"

    columns: list[tuple[str, Callable[[MetricRow], str]]] = [
        ("length", lambda r: f"{r.length}"),
        ("norm.sim", lambda r: fmt(r.normalized)),
        ("ratio", lambda r: fmt(r.comparative_ratio)),
        ("AUC [95% CI]", auc_cell),
        ("separation", lambda r: fmt(r.separation, 4)),
        ("effect", lambda r: fmt(r.effect_size, 2)),
        ("acc@1", lambda r: fmt(getattr(retrieval.get(r.length), "acc_at_1", None))),
        ("MRR", lambda r: fmt(getattr(retrieval.get(r.length), "mrr", None))),
        ("found", lambda r: f"{r.found}"),
        ("missed", lambda r: f"{r.missed}"),
        ("truncated", lambda r: f"{r.truncated}"),
    ]
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
