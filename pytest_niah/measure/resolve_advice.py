"""How to resolve an inconclusive verdict: the minimum detectable effect and what narrows it.

Every verdict carries the minimum detectable effect at its grid size (:data:`MDE_Z` times
the standard error: a 5% two-sided test with 80% power); an inconclusive one also says what
would resolve it: more needle groups while a realistic number does, else other levers.
"""

from __future__ import annotations

import math

from pytest_niah.measure.stats import Interval

MDE_Z = 1.96 + 0.84
# Suggest more needle groups only up to this many (realistic_groups); beyond, other levers.
REALISTIC_GROUPS_FACTOR = 10
REALISTIC_GROUPS = 1000


def mde(se: float) -> float:
    """Minimum detectable effect (5% two-sided, 80% power) from a standard error."""
    return MDE_Z * se if math.isfinite(se) else math.nan


def groups_to_resolve(groups: int, se: float, effect: float) -> int | None:
    """About how many needle groups would make ``effect`` detectable (SE shrinks as 1/sqrt(n))."""
    if groups < 1 or not math.isfinite(se) or not effect > 0:
        return None
    try:
        needed = groups * (mde(se) / effect) ** 2
    except OverflowError:  # an effect next to nothing: no grid resolves it
        return None
    return max(groups + 1, math.ceil(needed)) if math.isfinite(needed) else None


def no_interval(groups: int) -> str:
    """Why a metric has no interval, in a few words: ``1 needle group`` or ``bootstrap off``."""
    if groups < 2:
        return f"{groups} needle group{'' if groups == 1 else 's'}"
    return "bootstrap off"


def why_no_interval(interval: Interval, because: str) -> str:
    """``because``, unless the interval is missing: then why it is."""
    if math.isnan(interval.low) or math.isnan(interval.high):
        return f"no interval: {no_interval(interval.groups)}"
    return because


def realistic_groups(groups: int) -> int:
    """The most needle groups a suggestion may ask for: 1,000, or ten times today's."""
    return max(REALISTIC_GROUPS_FACTOR * groups, REALISTIC_GROUPS)


def resolve_advice(interval: Interval, effect: float, *, comparison: bool = False) -> str:
    """What would resolve an inconclusive verdict whose margin to its limit is ``effect``."""
    if interval.groups < 2:
        return "use two or more needle groups (--niah-groups): an interval resamples them"
    if not math.isfinite(interval.se):
        return "turn the bootstrap on (--niah-bootstrap)"
    needed = groups_to_resolve(interval.groups, interval.se, effect)
    if needed is None:
        return f"no number of needle groups resolves a margin of {effect:.3g}"
    if needed <= realistic_groups(interval.groups):
        return (
            f"about {needed} needle groups (now {interval.groups}) would resolve "
            f"{effect:.3g}; more positions or controls narrow it too"
        )
    wider = ", or allow a wider drop (--niah-compare-fail)" if comparison else ""
    return (
        f"a margin of {effect:.3g} is too small to detect at this grid (it detects about "
        f"{mde(interval.se):.3g}, and would need some {needed:,} needle groups, now "
        f"{interval.groups}); more needle positions or controls (--niah-positions, "
        f"--niah-controls) narrow the interval{wider}"
    )
