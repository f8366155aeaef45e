"""Position effects of pytest_niah.measure.metrics: bins and the straight-line fit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.measure.metrics import (
    POSITION_BINS,
    position_bin,
    position_effects,
)

# Relative needle positions: a grid of 0..1 plus the exact bin boundaries.
relative = st.one_of(st.sampled_from([1 / 3, 2 / 3]), st.integers(0, 1000).map(lambda i: i / 1000))


# -- position effects -----------------------------------------------------------------------


def test_position_bin_boundaries():
    assert position_bin(0.0) == "begin"
    assert position_bin(math.nextafter(1 / 3, 0)) == "begin"
    assert position_bin(1 / 3) == "middle"
    assert position_bin(0.5) == "middle"
    assert position_bin(2 / 3) == "middle"
    assert position_bin(math.nextafter(2 / 3, 1)) == "end"
    assert position_bin(1.0) == "end"
    assert POSITION_BINS == ("begin", "middle", "end")


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 60))
def test_position_effects_agree_with_numpy_on_random_data(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = 0.3 - 0.2 * x + rng.normal(0, 0.05, n)
    eff = position_effects(x, y)
    assert eff.pearson_r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-9)
    assert eff.slope == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-7, abs=1e-9)


@given(
    points=st.lists(
        st.tuples(relative, st.floats(-1, 1)),
        min_size=2,
        max_size=40,
    )
)
def test_position_effects_bins_and_fit_on_hypothesis_data(points):
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    eff = position_effects(x, y)
    for name, mask in (
        ("begin", x < 1 / 3),
        ("middle", (x >= 1 / 3) & (x <= 2 / 3)),
        ("end", x > 2 / 3),
    ):
        got = getattr(eff, name)
        if mask.any():
            assert got == pytest.approx(y[mask].mean(), abs=1e-12)
        else:
            assert math.isnan(got)
    if np.std(x) > 1e-3 and np.std(y) > 1e-3:
        assert eff.pearson_r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-7)
        assert eff.slope == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-6, abs=1e-7)


def test_position_effects_bins_are_means_of_thirds():
    x = [0.0, 0.1, 0.4, 0.5, 0.6, 0.9, 1.0]
    y = [1.0, 3.0, 10.0, 20.0, 30.0, 5.0, 7.0]
    eff = position_effects(x, y)
    assert eff.begin == pytest.approx(2.0)
    assert eff.middle == pytest.approx(20.0)
    assert eff.end == pytest.approx(6.0)


def test_position_effects_constant_score_has_zero_slope_and_nan_r():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eff = position_effects([0.0, 0.25, 0.5, 1.0], [0.4, 0.4, 0.4, 0.4])
    assert eff.slope == 0.0
    assert math.isnan(eff.pearson_r)
    assert eff.begin == eff.middle == eff.end == 0.4


def test_position_effects_constant_position_has_no_fit():
    eff = position_effects([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])
    assert math.isnan(eff.slope)
    assert math.isnan(eff.pearson_r)
    assert eff.middle == pytest.approx(0.2)
    assert math.isnan(eff.begin)
    assert math.isnan(eff.end)


def test_position_effects_drop_nonfinite_pairs():
    x = [0.0, 0.5, 1.0, np.nan, 0.2]
    y = [0.3, 0.2, 0.1, 0.9, np.inf]
    eff = position_effects(x, y)
    assert eff.slope == pytest.approx(-0.2)
    assert eff.pearson_r == pytest.approx(-1.0)
    assert eff.begin == pytest.approx(0.3)


def test_position_effects_of_nothing_is_all_nan():
    eff = position_effects([], [])
    assert all(math.isnan(v) for v in (eff.pearson_r, eff.slope, eff.begin, eff.middle, eff.end))
