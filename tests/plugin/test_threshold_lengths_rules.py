"""A per-length threshold must name a length of the run: one that does not gates nothing."""

from __future__ import annotations

import pytest

from pytest_niah.config.gate_expressions import parse_thresholds
from pytest_niah.errors import ConfigError
from pytest_niah.plugin.setting_checks import check_threshold_lengths


@pytest.mark.parametrize("value", ["0.6", "128=0.6", "128=0.6,512=0.55", "0.6,512=0.5"])
def test_thresholds_for_the_runs_own_lengths_or_none_in_particular_pass(value):
    # Found (mutation sweep, setting_checks.py:65 the `if stray` deleted): every
    # threshold was refused, the run's own lengths included.
    check_threshold_lengths("min_auc", parse_thresholds(value), (128, 512))


def test_a_threshold_for_a_length_the_run_lacks_is_named_with_the_runs_lengths():
    with pytest.raises(ConfigError) as info:
        check_threshold_lengths("min_auc", parse_thresholds("128=0.6,1024=0.5"), (128, 512))
    assert info.value.problem == (
        "--niah-min-auc sets a threshold for length 1024, which this run does not have "
        "(--niah-lengths=128,512)"
    )
    assert "--niah-min-auc" in info.value.hint
