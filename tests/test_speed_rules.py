"""Rules of experiment/speed.py that the speed tests' runs do not pin down: counts and spread."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_niah.experiment.speed import round_spread, speed_record


def _planned(length: int, *keys: str) -> SimpleNamespace:
    return SimpleNamespace(haystack=SimpleNamespace(length=length), pieces={"whole": list(keys)})


def test_inputs_read_from_the_cache_are_counted_as_cached_not_timed():
    plan = SimpleNamespace(
        haystacks=[_planned(128, "a", "b"), _planned(128, "b", "c"), _planned(256, "d", "e")],
        tokens={"a": 100, "b": 120, "c": 128, "d": 250, "e": 256},
    )
    # "b" and "e" came from the embedding cache: no model time.
    record = speed_record(plan, (128, 256), {"a": 0.5, "c": 0.5, "d": 1.0})
    short, long = record.lengths
    assert (short.inputs, short.cached) == (3, 1)  # "b" once, though two haystacks share it
    assert (long.inputs, long.cached) == (2, 1)
    assert short.tokens_per_second == pytest.approx((100 + 128) / 1.0)
    assert long.tokens_per_second == pytest.approx(250 / 1.0)


def test_the_round_spread_is_half_the_interquartile_range_over_the_median():
    rounds = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    # statistics.quantiles (exclusive): q1 2, q3 6, median 4.
    assert round_spread(rounds) == pytest.approx((6.0 - 2.0) / 2 / 4.0)
    assert round_spread([2.0, 2.0, 2.0, 2.0]) == 0.0
    assert round_spread([1.0, 2.0, 3.0]) is None  # too few rounds for quartiles
