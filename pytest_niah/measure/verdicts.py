"""Three-state verdicts: a gate says *fails*, *passes* or *cannot tell*, never a confident guess.

A gate compares a metric (or its change against a baseline) with a limit, using the 95%
bootstrap interval over needle groups:

- **comparison** (``--niah-compare-fail=auc:0.02``): *regressed* when the point drop exceeds
  the allowance and the whole interval of the change lies below zero; *within allowance*
  when the point and the interval's worst end stay inside the allowance; *inconclusive*
  otherwise;
- **minimum** (``--niah-min-auc=0.6``): *below threshold* when the point and the whole
  interval lie below it; *meets threshold* when the point and the interval's low end reach
  it; *inconclusive* otherwise.

A comparison with no paired cell (the two runs share no cell of the slice: other lengths,
needle groups, positions or orders) compared nothing: its state is *no paired cells*, an
error that fails whatever the inconclusive policy says, never a verdict a policy can pass.

A passing state needs the point inside the limit too: a percentile interval need not
contain its point estimate, and a gate must never pass what a point gate would fail.

Every verdict carries the minimum detectable effect at this grid size (:data:`MDE_Z` times
the standard error: a 5% two-sided test with 80% power) and what would resolve an
inconclusive one. What an inconclusive verdict does is a policy (``--niah-inconclusive``):
``auto`` fails it when the point estimate is past the limit and warns otherwise, exactly
as strict as a point gate, never weaker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pytest_niah.measure.stats import Interval

MDE_Z = 1.96 + 0.84
State = Literal[
    "regressed",
    "within allowance",
    "below threshold",
    "meets threshold",
    "inconclusive",
    "no paired cells",
]
Outcome = Literal["fail", "warn", "pass"]
UNPAIRED: State = "no paired cells"
FAILING: frozenset[str] = frozenset({"regressed", "below threshold", UNPAIRED})
PASSING: frozenset[str] = frozenset({"within allowance", "meets threshold"})


@dataclass(frozen=True)
class Verdict:
    """One gate's verdict at one length.

    Attributes:
        kind: ``comparison`` or ``minimum``.
        metric: The metric's name.
        state: See the module docs.
        point: The metric (``minimum``) or its change (``comparison``).
        low: Lower end of the 95% interval (NaN: none).
        high: Upper end.
        limit: The threshold (``minimum``) or the allowed drop (``comparison``, >= 0).
        mde: Minimum detectable effect at this grid size (NaN: no interval).
        groups: Needle groups behind the interval.
        past_limit: The point estimate alone is past the limit (what a point gate checks).
        reason: Why the verdict is inconclusive, when it is.
        resolve: What would resolve it (more groups, positions, controls).

    A comparison over zero needle groups paired nothing: whoever builds it as inconclusive,
    its state is :data:`UNPAIRED`, which fails under every policy.
    """

    kind: Literal["comparison", "minimum"]
    metric: str
    state: State
    point: float
    low: float
    high: float
    limit: float
    mde: float
    groups: int
    past_limit: bool
    reason: str = ""
    resolve: str = ""

    def __post_init__(self) -> None:
        if self.kind == "comparison" and self.groups == 0 and self.state == "inconclusive":
            object.__setattr__(self, "state", UNPAIRED)

    def outcome(self, policy: str = "auto") -> Outcome:
        """What the test does: fail, warn or pass, given the inconclusive policy."""
        if self.state in FAILING:
            return "fail"
        if self.state in PASSING:
            return "pass"
        if policy == "auto":
            return "fail" if self.past_limit else "warn"
        if policy in ("fail", "warn", "pass"):
            return policy  # type: ignore[return-value]
        raise ValueError(f"unknown inconclusive policy {policy!r}: use auto, fail, warn or pass")


def compare_verdict(delta: Interval, allowed_drop: float) -> Verdict:
    """The verdict on a metric's change (current - baseline), given the largest drop allowed."""
    drop = -delta.point
    past = not drop <= allowed_drop  # NaN (undefined now) counts as past
    if math.isnan(delta.point):
        state: State = "regressed"
        reason = "the metric is undefined in this run"
    elif drop > allowed_drop and delta.high < 0:
        state, reason = "regressed", ""
    elif not past and delta.low >= -allowed_drop:
        state, reason = "within allowance", ""
    else:
        because = (
            "the point estimate lies past the allowance, outside its own interval"
            if delta.low >= -allowed_drop
            else "the change's interval reaches past the allowance"
        )
        state, reason = "inconclusive", _why(delta, because)
    return Verdict(
        kind="comparison",
        metric=delta.metric,
        state=state,
        point=delta.point,
        low=delta.low,
        high=delta.high,
        limit=allowed_drop,
        mde=mde(delta.se),
        groups=delta.groups,
        past_limit=past,
        reason=reason,
        resolve=_resolve(delta, allowed_drop) if state == "inconclusive" else "",
    )


def minimum_verdict(value: Interval, threshold: float) -> Verdict:
    """The verdict on a metric against its minimum, from the metric's own interval."""
    past = not value.point >= threshold  # NaN counts as past
    if math.isnan(value.point):
        state: State = "below threshold"
        reason = "the metric is undefined in this run"
    elif value.point < threshold and value.high < threshold:
        state, reason = "below threshold", ""
    elif not past and value.low >= threshold:
        state, reason = "meets threshold", ""
    else:
        because = (
            "the point estimate lies below the threshold, outside its own interval"
            if value.low >= threshold
            else "the interval straddles the threshold"
        )
        state, reason = "inconclusive", _why(value, because)
    gap = abs(value.point - threshold) if not math.isnan(value.point) else math.nan
    return Verdict(
        kind="minimum",
        metric=value.metric,
        state=state,
        point=value.point,
        low=value.low,
        high=value.high,
        limit=threshold,
        mde=mde(value.se),
        groups=value.groups,
        past_limit=past,
        reason=reason,
        resolve=_resolve(value, gap) if state == "inconclusive" else "",
    )


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


def _why(interval: Interval, because: str) -> str:
    if math.isnan(interval.low) or math.isnan(interval.high):
        return "no interval (bootstrap off, or fewer than two needle groups)"
    return because


def _resolve(interval: Interval, effect: float) -> str:
    if interval.groups < 2 or not math.isfinite(interval.se):
        return "turn the bootstrap on (--niah-bootstrap) and use two or more needle groups"
    needed = groups_to_resolve(interval.groups, interval.se, effect)
    if needed is None:
        return f"no number of needle groups resolves a margin of {effect:.3g}"
    return (
        f"about {needed} needle groups (now {interval.groups}) would resolve "
        f"{effect:.3g}; more positions or controls narrow it too"
    )
