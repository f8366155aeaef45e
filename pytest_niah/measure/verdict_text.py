"""A gate's verdict in words: one line with its numbers, interval, cells, MDE and the fix.

The verdict itself, and every state it can be in, are :mod:`pytest_niah.measure.verdicts`'s.
"""

from __future__ import annotations

import math

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.display import fmt, signed
from pytest_niah.measure.verdicts import UNPAIRED, Verdict


def metric_digits(metric: str) -> int:
    """Decimals a metric is shown with (separations are small cosine differences)."""
    return 4 if metric == "separation" else 3


def verdict_message(what: str, verdict: Verdict) -> str:
    """One line for a gate's verdict: numbers, interval, cells, MDE, and how to resolve it."""
    label = METRIC_LABELS.get(verdict.metric, verdict.metric)
    paired = (
        f" (paired {verdict.paired_cells} of {verdict.run_cells} cells)"
        if verdict.paired_cells is not None and verdict.run_cells is not None
        else ""
    )
    if verdict.state == UNPAIRED:
        fix = f"; {verdict.resolve}" if verdict.resolve else ""
        return (
            f"{what}: {label} not compared{paired}: {verdict.state} ({verdict.reason}: the two "
            "runs share no cell, e.g. they ran different --niah-lengths or --niah-groups; an "
            f"error whatever --niah-inconclusive says{fix})"
        )
    digits = metric_digits(verdict.metric)
    interval = (
        f" [{fmt(verdict.low, digits)}, {fmt(verdict.high, digits)}]"
        if math.isfinite(verdict.low)
        else ""
    )
    if verdict.kind == "comparison":
        numbers = (
            f"{label} changed {signed(verdict.point, digits)}{interval}{paired}, allowed drop "
            f"{fmt(verdict.limit, digits)}"
        )
    else:
        numbers = f"{label} {fmt(verdict.point, digits)}{interval}, threshold {verdict.limit:g}"
    mde_text = (
        f"; MDE {fmt(verdict.mde, digits)} at {verdict.groups} groups"
        if math.isfinite(verdict.mde)
        else ""
    )
    extra = ""
    if verdict.state == "inconclusive":
        extra = (
            f" ({verdict.reason}; {verdict.resolve})" if verdict.resolve else f" ({verdict.reason})"
        )
    elif verdict.reason:
        extra = f" ({verdict.reason})"
    return f"{what}: {numbers}{mde_text}: {verdict.state}{extra}"
