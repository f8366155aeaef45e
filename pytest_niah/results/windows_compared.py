"""Comparing what two runs' models read: the headline's window phrase and the coverage rule.

See :mod:`pytest_niah.results.compare` (**Coverage**) for why a length can not show a
difference between two windows when no needle of the grid sits between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.config.vocabulary import WHOLE_HAYSTACK
from pytest_niah.measure.records import CaseResult
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.results_schema import ModelInfo

__all__ = ["coverage_gap", "window_change"]


def window_change(current: ModelInfo, baseline: ModelInfo) -> str:
    """A phrase where both runs measured their model's window and found different ones.

    Empty where they agree, or where either was not measured (results from before the
    probe): a server that cut inputs in one run and not the other explains a change in
    every metric past the shorter window.
    """
    if current.window_probe is None or baseline.window_probe is None:
        return ""
    a, b = current.measured_window, baseline.measured_window
    if a == b or current.window_probe.probed == 0 or baseline.window_probe.probed == 0:
        return ""

    def reads(model: ModelInfo) -> str:
        probe = model.window_probe
        if model.measured_window is not None:
            return f"{model.measured_window:,} tokens"
        return f"every token of {probe.probed:,}" if probe is not None else "?"

    return (
        f"the two runs measured different windows: this run's model reads {reads(current)}, "
        f"the baseline's {reads(baseline)}"
    )


def coverage_gap(
    current: NiahResults,
    baseline: NiahResults,
    where: tuple[str, str, int],
    cur_cases: Sequence[CaseResult],
    base_cases: Sequence[CaseResult],
) -> str:
    """Why this length cannot show a difference in what the two models read, or ""."""
    _, scoring, length = where
    a, b = current.model.max_tokens, baseline.model.max_tokens
    if a == b or scoring not in WHOLE_HAYSTACK:
        return ""
    low = min(w for w in (a, b) if w is not None)
    high = length if a is None or b is None else min(max(a, b), length)
    needle = min((c.needle_tokens for c in cur_cases), default=0)
    if low >= min(high, length - needle + 1):
        return ""  # no needle can sit between the two windows at this length
    probed = any(low <= c.needle_offset < high for c in (*cur_cases, *base_cases))
    if probed:
        return ""
    return (
        f"the two models read {a or 'all'} and {b or 'all'} tokens, and no needle of this grid "
        f"sits between token {low} and {high} at this length"
    )
