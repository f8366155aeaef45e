"""Rules of measure/metrics.py that mutants found unchecked, beside test_metrics.py."""

from __future__ import annotations

import math

import numpy as np

from pytest_niah.measure.metrics import cohens_d


def test_a_spread_of_float_dust_on_large_scores_is_no_spread():
    # Found (mutation, metrics.py:120 `1e-12 * scale` -> `1e-12 / scale`): "no spread" is
    # judged relative to the scores' size: one ulp apart at 1e6 (about 1e-10) is float dust,
    # not a difference to standardise by.
    dust = np.nextafter(1e6, 2e6)
    assert math.isnan(cohens_d([1e6, 1e6, dust], [1e6, 1e6, 1e6]))
    assert not math.isnan(cohens_d([1e6, 1e6, 1e6 + 1.0], [1e6, 1e6, 1e6]))  # a real spread
