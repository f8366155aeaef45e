"""One rule for chance (#46.1): the effective length, the suggested gates, n/m and the report.

An interval's lower bound is read at the two digits the tables show, rounded down: a bound
of 0.505 shows as 0.50 and is at chance everywhere, not above chance for the effective
length and at chance for the suggested gate; an interval wholly below 0.5 is at chance for
n/m as for the gates.
"""

from __future__ import annotations

import math

import pytest
from test_gates import metric_row

from pytest_niah.measure.chance import CHANCE, above_chance, at_chance, shown_low
from pytest_niah.measure.gate_reasons import suggest_gates
from pytest_niah.measure.meaningful import AT_CHANCE, normalized_not_meaningful
from pytest_niah.measure.records import IntervalRow
from pytest_niah.measure.stats import effective_length


@pytest.mark.parametrize(
    ("low", "at"),
    [(0.5, True), (0.505, True), (0.509, True), (0.51, False), (0.3, True), (0.57, False)],
)
def test_the_edges(low, at):
    assert at_chance(low) is at and above_chance(low) is (not at)


def test_a_bound_shows_as_the_tables_show_it_rounded_down():
    assert shown_low(0.579) == 0.57 and shown_low(0.57) == 0.57  # 0.57 * 100 < 57 in binary
    assert CHANCE == 0.5


def test_an_undefined_bound_is_neither():
    assert not at_chance(math.nan) and not above_chance(math.nan)


def interval(low: float, high: float, metric: str = "auc", length: int = 128) -> IntervalRow:
    return IntervalRow("onehop", "whole", length, metric, (low + high) / 2, low, high)


def test_the_effective_length_and_the_suggested_gate_agree_on_a_low_of_0_505():
    assert effective_length([128, 256], [0.9, 0.85], [0.7, 0.505]) == 128
    assert effective_length([128, 256], [0.9, 0.85], [0.7, 0.52]) == 256
    said = suggest_gates({"m": [interval(0.7, 0.9), interval(0.505, 0.8, length=256)]})
    assert "At chance: no useful gate at 256" in said and "128=0.70" in said


@pytest.mark.parametrize(
    ("low", "high", "meaningful"),
    [(0.31, 0.45, False), (0.5, 0.7, False), (0.505, 0.7, False), (0.52, 0.7, True)],
)
def test_normalized_similarity_means_nothing_where_the_auc_interval_reaches_chance(
    low, high, meaningful
):
    row = metric_row()
    said = normalized_not_meaningful(row, interval(low, high))
    assert said == (None if meaningful else AT_CHANCE)
