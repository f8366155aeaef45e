"""The verdict a reviewer reads first: summary.md's headline and its gated-metrics table.

Every gate of a run, whether a threshold (``--niah-min-auc``, ``--niah-min-ratio``) or an
allowance against a baseline (``--niah-compare-fail``), becomes a :class:`GateOutcome`;
the headline counts them (✅ all passed, ⚠️ some warned or nothing was gated, ❌ some
failed) and the gated table shows, per length, only the metrics a gate looked at.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pytest_niah.measure.gate_reasons import GateOutcome as GateOutcome  # report's API
from pytest_niah.measure.gate_reasons import gate_reason as gate_reason
from pytest_niah.measure.gating import OUTCOME_ORDER, comparison_gates, worst_outcome
from pytest_niah.report.comparison import ReportComparison
from pytest_niah.report.escape import md_text

# The per-length table's column of each gated metric (its header starts with this).
METRIC_COLUMNS = {
    "auc": "AUC",
    "comparative_ratio": "ratio",
    "normalized": "norm.sim",
    "separation": "separation",
    "effect_size": "effect",
}


def comparison_outcomes(
    comparisons: Sequence[ReportComparison], policy: str = "auto"
) -> list[GateOutcome]:
    """The ``--niah-compare-fail`` gates of each comparison, under an inconclusive policy.

    Every length of the current run counts, paired or not: a gated length no baseline cell
    pairs with is a *no paired cells* verdict, which fails (as the plugin's gate test does).
    """
    return [
        outcome
        for c in comparisons
        for gates in comparison_gates(c.comparison, c.allowances, policy)
        for outcome in gates.outcomes(c.label)
    ]


def worst(outcomes: Sequence[str]) -> str:
    """The worst of some outcomes (:func:`worst_outcome`), as a table shows it; ``-`` for none."""
    return worst_outcome(outcomes) or "-"


def headline(
    labels: Sequence[str], gates: Sequence[GateOutcome], *, models: int | None = None
) -> str:
    """One line: ✅ / ⚠️ / ❌, how many gates passed, warned or failed, which models, and why.

    A run that gated nothing says so (⚠️): it checked nothing. A ⚠️ or ❌ names the first
    gate that warned or failed and why (:func:`gate_reason`). ``models`` counts the models
    (a baseline run of the same model is no second one); ``labels`` when ``None``.
    """
    count = len(labels) if models is None else models
    models_text = f"{count} model{'s' if count != 1 else ''}"
    return _counts(labels, gates, models_text) + _why(gates)


def refusal_headline(label: str, problem: str, hint: str, root: Path | None = None) -> str:
    """A refused comparison as ``summary.md`` and the step summary show it: ❌ and why.

    Paths under ``root`` (the current folder) are shown relative to it, as in every summary.
    """
    base = f"{(root or Path.cwd()).resolve()}{os.sep}"
    why, fix = (md_text(text.replace(base, "")) for text in (problem, hint))
    end = "" if why.endswith((".", "!", "?", ":")) else "."
    return f"# ❌ pytest-niah: comparison refused for {md_text(label)}: {why}{end} Fix: {fix}\n"


def _why(gates: Sequence[GateOutcome]) -> str:
    for outcome in ("fail", "warn"):
        first = next((g for g in gates if g.outcome == outcome and g.reason), None)
        if first is not None:
            where = f"{first.label} {first.arm}/{first.scoring} L{first.length}"
            return f": {md_text(where)}: {md_text(first.reason)}"
    return ""


def _counts(labels: Sequence[str], gates: Sequence[GateOutcome], models: str) -> str:
    if not gates:
        return (
            f"⚠️ pytest-niah: nothing gated ({models} measured; no threshold and no "
            "baseline allowance)"
        )
    counts = {outcome: sum(g.outcome == outcome for g in gates) for outcome in OUTCOME_ORDER}
    total = len(gates)
    if counts["fail"]:
        failing = ", ".join(
            md_text(x) for x in dict.fromkeys(g.label for g in gates if g.outcome == "fail")
        )
        warned = f", {counts['warn']} warned" if counts["warn"] else ""
        return f"❌ pytest-niah: {counts['fail']} of {total} gates failed{warned} ({failing})"
    if counts["warn"]:
        return (
            f"⚠️ pytest-niah: {counts['warn']} of {total} gates warned, "
            f"{counts['pass']} passed ({models})"
        )
    return f"✅ pytest-niah: all {total} gates passed ({models})"


def shown_path(text: str, root: Path | None = None) -> str:
    """A path under ``root`` (the current folder) relative to it; other text unchanged.

    A CI runner's absolute paths (``/home/runner/work/repo/repo/.niah/...``) mean nothing
    to a reviewer; the repository-relative path does.
    """
    if not text or not os.path.isabs(text):
        return text
    base = (root or Path.cwd()).resolve()
    try:
        return Path(text).resolve().relative_to(base).as_posix()
    except (ValueError, OSError):
        return text
