"""What an inconclusive verdict suggests: needle groups only when a realistic number helps."""

from __future__ import annotations

import re

from pytest_niah.measure.resolve_advice import MDE_Z, groups_to_resolve, realistic_groups
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import compare_verdict, minimum_verdict


def change(point, low, high, *, se, groups, metric="auc"):
    return Interval(metric, point, low, high, se, groups)


def test_a_hopeless_number_of_groups_is_never_suggested():
    # The found case: "about 111816 needle groups would resolve" at 28 groups.
    delta = change(-0.001, -0.06, 0.05, se=0.03, groups=28)
    needed = groups_to_resolve(28, 0.03, 0.0005)
    assert needed is not None and needed > 100_000
    v = compare_verdict(delta, 0.0005)
    assert v.state == "inconclusive"
    assert "would resolve" not in v.resolve
    assert "too small to detect at this grid" in v.resolve
    assert "--niah-positions" in v.resolve and "--niah-controls" in v.resolve
    assert "--niah-compare-fail" in v.resolve  # the wider allowance, for a comparison


def test_a_minimum_gate_names_the_levers_but_no_allowance():
    m = minimum_verdict(change(0.6005, 0.5, 0.7, se=0.05, groups=10), 0.6)
    assert m.state == "inconclusive"
    assert "would resolve" not in m.resolve
    assert "too small to detect" in m.resolve
    assert "--niah-compare-fail" not in m.resolve


def test_a_realistic_number_is_still_suggested():
    v = compare_verdict(change(-0.01, -0.05, 0.03, se=0.01, groups=16), 0.02)
    match = re.match(r"about (\d+) needle groups \(now 16\) would resolve", v.resolve)
    assert match and int(match.group(1)) <= realistic_groups(16)


def test_realistic_means_a_thousand_or_ten_times_today():
    assert realistic_groups(8) == 1000
    assert realistic_groups(28) == 1000
    assert realistic_groups(500) == 5000
    # Just past 1,000: no longer suggested.
    groups, se = 10, 0.01
    effect = MDE_Z * se * (groups / 1050) ** 0.5  # needs about 1,050 groups
    needed = groups_to_resolve(groups, se, effect)
    assert needed is not None and 1000 < needed < 1100
    v = compare_verdict(change(-effect / 2, -0.1, 0.1, se=se, groups=groups), effect)
    assert "would resolve" not in v.resolve
    assert f"would need some {needed:,} needle groups, now 10" in v.resolve
