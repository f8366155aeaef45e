"""A model's comparison with its baseline, as the reports show it.

The plugin (or the ``pytest-niah`` command) computes a
:class:`~pytest_niah.results.compare.Comparison`; wrapped in a :class:`ReportComparison`
with the model's label, where the baseline came from and the allowances that gate it, it
becomes a section of summary.md, the GitHub step summary and report.html (the same
columns as the terminal's comparison table) and an entry of ``comparison.json``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.measure.comparison_verdicts import slice_verdicts
from pytest_niah.measure.verdict_text import verdict_message
from pytest_niah.measure.verdicts import PASSING, UNPAIRED
from pytest_niah.report.comparison_table import comparison_cells, comparison_notes
from pytest_niah.results.compare import Comparison
from pytest_niah.results.speed_record import SpeedRecord

__all__ = ["ReportComparison", "comparisons_json"]

# The failing states, listed first in the verdict counts.
FAILING_FIRST = ("regressed", UNPAIRED)


@dataclass(frozen=True)
class ReportComparison:
    """One model's run compared with its baseline.

    Attributes:
        label: The model's label (as in the reports' other sections).
        baseline: Where the baseline came from, as shown: a saved run's name or a file.
        comparison: The paired deltas (:func:`~pytest_niah.results.compare.compare_results`).
        allowances: The ``--niah-compare-fail`` allowances; they fill the verdict column.
        baseline_speed: The baseline's speed record, drawn beside this run's in the speed
            figure (never compared: speed is no verdict).
    """

    label: str
    baseline: str
    comparison: Comparison
    allowances: tuple[Allowance, ...] = ()
    baseline_speed: SpeedRecord | None = None

    @property
    def title(self) -> str:
        """``LABEL versus BASELINE`` (plain text: escape it for the format).

        Where the two runs measured different windows or read different tokens, the title
        says so in parentheses (:attr:`Comparison.title_notes`).
        """
        title = f"{self.label} versus {self.baseline}" if self.baseline else self.label
        notes = self.comparison.title_notes
        return f"{title} ({notes})" if notes else title

    def cells(self) -> tuple[list[str], list[list[str]]]:
        """The table: the terminal comparison table's header and rows."""
        return comparison_cells(self.comparison, self.allowances)

    def notes(self) -> list[str]:
        """Why rows show ``n/m``: one line each (below the table)."""
        return comparison_notes(self.comparison)

    def paired_text(self) -> str:
        """One sentence: how many cells were paired, and how many had no partner."""
        c = self.comparison
        paired = sum(c.paired.values())
        text = f"Paired on {paired:,} cells (identical needle, arm, scoring, order, length, depth)"
        if c.unpaired_current or c.unpaired_baseline:
            text += (
                f"; {c.unpaired_current:,} cases of this run and {c.unpaired_baseline:,} of "
                "the baseline have no partner and are left out"
            )
        return text + "."

    def allowed_texts(self) -> list[str]:
        """The differences between the runs that the user accepted, one phrase each."""
        return [d.describe() for d in self.comparison.allowed]

    def verdict_texts(self) -> list[str]:
        """One line per gate that does not pass outright (regressed, inconclusive, unpaired)."""
        return [
            verdict_message(f"{arm}/{scoring} L{length}", verdict)
            for (arm, scoring, length), verdict in slice_verdicts(self.comparison, self.allowances)
            if verdict.state not in PASSING
        ]

    def counts(self) -> dict[str, int]:
        """Gates per verdict state, e.g. ``{"regressed": 1, "within allowance": 11}``.

        Every gated slice of the current run counts, those the baseline did not measure too.
        """
        out: dict[str, int] = {}
        for _, verdict in slice_verdicts(self.comparison, self.allowances):
            out[verdict.state] = out.get(verdict.state, 0) + 1
        return out

    def counts_text(self) -> str:
        """``Verdicts: 1 regressed, 11 within allowance.``, or empty when nothing is gated."""
        counts = self.counts()
        if not counts:
            return ""
        order = [*FAILING_FIRST, "inconclusive", "improved", "within allowance"]
        states = sorted(counts, key=lambda s: (order.index(s) if s in order else len(order), s))
        gates = ", ".join(a.expression() for a in self.allowances)
        listed = ", ".join(f"{counts[s]} {s}" for s in states)
        return f"Verdicts ({gates}): {listed}."

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the comparison's own dict, plus label, baseline and verdicts."""
        verdicts = [
            {
                "arm": arm,
                "scoring": scoring,
                "length": length,
                "metric": v.metric,
                "state": v.state,
                "allowed_drop": v.limit,
                "paired_cells": v.paired_cells,
                "run_cells": v.run_cells,
                "message": verdict_message(f"{arm}/{scoring} L{length}", v),
            }
            for (arm, scoring, length), v in slice_verdicts(self.comparison, self.allowances)
        ]
        data = {
            "label": self.label,
            "baseline": self.baseline,
            "allowances": [a.expression() for a in self.allowances],
            **self.comparison.to_dict(),
            "verdicts": verdicts,
        }
        cleaned: dict[str, Any] = _finite_or_null(data)
        return cleaned


def comparisons_json(comparisons: Sequence[ReportComparison]) -> str:
    """``comparison.json``: ``{"comparisons": [...]}``, one entry per model (sorted keys)."""
    import json

    payload = {"comparisons": [c.to_dict() for c in comparisons]}
    return json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"


def _finite_or_null(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(v) for v in value]
    return value
