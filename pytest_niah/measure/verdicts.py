"""Verdicts: a gate says *fails*, *passes* or *cannot tell*, never a confident guess.

A gate compares a metric (or its change against a baseline) with a limit, using the 95%
bootstrap interval over needle groups:

- **comparison** (``--niah-compare-fail=auc:0.02``): *regressed* when the point drop exceeds
  the allowance and the whole interval of the change lies below zero; *improved* when the
  point and the whole interval lie above +allowance; *within allowance* when the point and
  the interval's worst end stay inside the allowance; *inconclusive* otherwise;
- **minimum** (``--niah-min-auc=0.6``): *below threshold* when the point and the whole
  interval lie below it; *meets threshold* when the point and the interval's low end reach
  it; *inconclusive* otherwise.

A comparison is made on the cells both runs measured, and says how many of this run's cells
of its length that is. Before or after the interval's rules: no paired cell is *no paired
cells*, an error whatever the inconclusive policy says; a metric undefined in the baseline
has nothing to fall from (*within allowance*); a passing comparison becomes *inconclusive*
when the grid cannot show a change at its length (coverage, :mod:`pytest_niah.results.compare`)
or when it pairs fewer than half of this run's cells there: those left out may hold the
regression. Which gates a length has, and the rules over them, are
:mod:`pytest_niah.measure.gating`'s.

A passing state needs the point inside the limit too: a percentile interval need not
contain its point estimate, and a gate must never pass what a point gate would fail. Every
verdict carries the minimum detectable effect at this grid size
(:data:`~pytest_niah.measure.resolve_advice.MDE_Z` times the standard error: a 5% two-sided
test with 80% power) and what would resolve an inconclusive one. ``--niah-inconclusive``
says what an inconclusive verdict does (:meth:`Verdict.outcome`): ``auto`` fails it when the
point estimate is past the limit (or the comparison pairs a minority of the cells) and warns
otherwise, exactly as strict as a point gate, never weaker. The verdict in one line is
:func:`pytest_niah.measure.verdict_text.verdict_message`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from pytest_niah.config.vocabulary import METRIC_LABELS
from pytest_niah.measure.resolve_advice import mde, resolve_advice, why_no_interval
from pytest_niah.measure.stats import Interval

State = Literal[
    "regressed",
    "improved",
    "within allowance",
    "below threshold",
    "meets threshold",
    "inconclusive",
    "no paired cells",
]
Outcome = Literal["fail", "warn", "pass"]
UNPAIRED: State = "no paired cells"
FAILING: frozenset[str] = frozenset({"regressed", "below threshold", UNPAIRED})
PASSING: frozenset[str] = frozenset({"improved", "within allowance", "meets threshold"})


@dataclass(frozen=True)
class Verdict:
    """One gate's verdict at one length.

    Built by :func:`compare_verdict` and :func:`minimum_verdict` only.

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
        paired_cells: A comparison's cells paired with the baseline (``None``: a minimum).
        run_cells: This run's cells of the comparison's length (``None``: a minimum).
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
    paired_cells: int | None = None
    run_cells: int | None = None

    @property
    def pairs_a_minority(self) -> bool:
        """A comparison that pairs fewer than half of this run's cells of its length."""
        if self.paired_cells is None or self.run_cells is None:
            return False
        return 2 * self.paired_cells < self.run_cells

    def outcome(self, policy: str = "auto") -> Outcome:
        """What the test does: fail, warn or pass, given the inconclusive policy."""
        if self.state in FAILING:
            return "fail"
        if self.state in PASSING:
            return "pass"
        if policy == "auto":
            return "fail" if self.past_limit or self.pairs_a_minority else "warn"
        if policy in ("fail", "warn", "pass"):
            return policy  # type: ignore[return-value]
        raise ValueError(f"unknown inconclusive policy {policy!r}: use auto, fail, warn or pass")


def compare_verdict(
    delta: Interval,
    allowed_drop: float,
    *,
    baseline_undefined: bool = False,
    unresolved: str = "",
    paired_cells: int | None = None,
    run_cells: int | None = None,
    not_meaningful: str = "",
) -> Verdict:
    """The verdict on a metric's change (current - baseline), given the largest drop allowed.

    Args:
        delta: The change and its paired interval.
        allowed_drop: The largest drop allowed (>= 0).
        baseline_undefined: The metric is undefined in the baseline: nothing to fall from.
        unresolved: Why the grid cannot show a change at this length (coverage), or "".
        paired_cells: Cells paired with the baseline at this length; 0: nothing was
            compared, *no paired cells* whatever the numbers.
        run_cells: This run's cells at this length.
        not_meaningful: Why the metric's value means nothing here (``n/m``), or "": then
            its change is *inconclusive* whatever its interval says (a model falling to
            chance can look like a gain of normalized similarity, and one rising from chance
            like a loss); *no paired cells* stays.
    """
    state, reason, resolve, past = _change_state(
        delta, allowed_drop, baseline_undefined=baseline_undefined, unpaired=paired_cells == 0
    )
    verdict = Verdict(
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
        resolve=resolve,
        paired_cells=paired_cells,
        run_cells=run_cells,
    )
    if not_meaningful and state != UNPAIRED:
        label = METRIC_LABELS.get(delta.metric, delta.metric)
        return replace(
            verdict,
            state="inconclusive",
            past_limit=False,
            reason=f"{label} is not meaningful here ({not_meaningful})",
            resolve="gate AUC or comparative ratio instead",
        )
    return _unresolved_or_minority(verdict, unresolved)


def _change_state(
    delta: Interval, allowed_drop: float, *, baseline_undefined: bool, unpaired: bool
) -> tuple[State, str, str, bool]:
    """A change's state from its interval: (state, reason, resolve, past the limit)."""
    drop = -delta.point
    past = not drop <= allowed_drop  # NaN (undefined now) counts as past
    if unpaired:
        why = "no cell of this arm, scoring and length is paired with the baseline"
        return UNPAIRED, why, "compare with a baseline that measured it", past
    if baseline_undefined:
        return "within allowance", "undefined in the baseline: nothing to fall from", "", False
    if math.isnan(delta.point):
        return "regressed", "the metric is undefined in this run", "", past
    if drop > allowed_drop and delta.high < 0:
        return "regressed", "", "", past
    if delta.point > allowed_drop and delta.low > allowed_drop:
        return "improved", "", "", past
    if not past and delta.low >= -allowed_drop:
        return "within allowance", "", "", past
    because = (
        "the point estimate lies past the allowance, outside its own interval"
        if delta.low >= -allowed_drop
        else "the change's interval reaches past the allowance"
    )
    resolve = resolve_advice(delta, allowed_drop, comparison=True)
    return "inconclusive", why_no_interval(delta, because), resolve, past


def _unresolved_or_minority(verdict: Verdict, unresolved: str) -> Verdict:
    """A passing change the grid cannot show, or one pairing a minority of cells: inconclusive."""
    if verdict.state in PASSING and unresolved:
        verdict = replace(
            verdict,
            state="inconclusive",
            reason=unresolved,
            resolve="add needle positions (--niah-positions) so that some sit there",
        )
    if verdict.pairs_a_minority and verdict.state not in FAILING:
        verdict = replace(
            verdict,
            state="inconclusive",
            reason=(
                f"only {verdict.paired_cells} of this run's {verdict.run_cells} cells at this "
                "length are paired with the baseline: the others may hold a regression"
            ),
            resolve="compare with a baseline of this run's grid (save one with --niah-save)",
        )
    return verdict


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
        state, reason = "inconclusive", why_no_interval(value, because)
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
        resolve=resolve_advice(value, gap) if state == "inconclusive" else "",
    )
