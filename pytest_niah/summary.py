"""Plain-text tables of per-length metrics, for the terminal summary."""

from __future__ import annotations

import math
from collections.abc import Callable

from .results import MetricRow, NiahResults

COLUMNS: tuple[tuple[str, Callable[[MetricRow], str]], ...] = (
    ("length", lambda r: f"{r.length}"),
    ("norm.sim", lambda r: _f(r.normalized)),
    ("ratio", lambda r: _f(r.comparative_ratio)),
    ("AUC", lambda r: _f(r.auc)),
    ("separation", lambda r: _f(r.separation, 4)),
    ("effect", lambda r: _f(r.effect_size, 2)),
    ("found", lambda r: f"{r.found}"),
    ("missed", lambda r: f"{r.missed}"),
    ("truncated", lambda r: f"{r.truncated}"),
)


def _f(value: float, digits: int = 3) -> str:
    return "nan" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def length_table(
    results: NiahResults, arm: str, gate: Callable[[MetricRow], str] | None = None
) -> list[str]:
    """Aligned lines: a header, then one row per length; ``gate`` adds a status column."""
    rows = results.rows("length", arm)
    header = [name for name, _ in COLUMNS] + (["gate"] if gate else [])
    body = [[fmt(r) for _, fmt in COLUMNS] + ([gate(r)] if gate else []) for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    return [
        "  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True))
        for line in [header, *body]
    ]


def title(label: str, results: NiahResults, arm: str) -> str:
    """One line naming the model, arm and the model's window."""
    window = results.model.max_tokens
    seen = "no limit" if window is None else f"reads {window} tokens"
    fingerprint = results.model.fingerprint[:12]
    return f"{label} ({results.model.name}), arm {arm}: {seen}, fingerprint {fingerprint}"
