"""Rules of measure/stats.py that mutants found unchecked, beside test_stats*.py."""

from __future__ import annotations

import pytest

from pytest_niah.measure.stats import paired_bootstrap_delta


def test_an_unknown_metric_is_refused_by_its_name_before_any_work():
    # Found (mutation, stats.py:102 the raise deleted): the metric is checked first, with
    # its own message naming it and the metrics there are (not the later computation's).
    with pytest.raises(ValueError, match=r"^unknown metric 'nope'; expected one of \("):
        paired_bootstrap_delta([], [], metric="nope", n_resamples=10, seed=0)
    with pytest.raises(ValueError, match=r"^unknown metric 'nope'; expected one of \("):
        paired_bootstrap_delta([], [], metric="nope", n_resamples=0, seed=0)
