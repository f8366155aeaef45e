"""Rules of ``measure/verdicts.py`` that mutants found unchecked, beside test_verdicts.py."""

from __future__ import annotations

import math

from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import compare_verdict, minimum_verdict, verdict_message


def test_a_verdict_s_line_ends_with_why_and_what_would_resolve_it():
    # Found (mutation sweep mutA, verdicts.py:343 the reason's `if` deleted): an
    # inconclusive verdict's line gives its reason and its fix; a decided one its reason
    # alone, where it has one; one without a reason ends at its state.
    straddles = minimum_verdict(Interval("auc", 0.62, 0.55, 0.7, 0.04, 8), 0.6)
    assert straddles.state == "inconclusive" and straddles.reason and straddles.resolve
    assert verdict_message("gate", straddles).endswith(
        f": inconclusive ({straddles.reason}; {straddles.resolve})"
    )
    undefined = minimum_verdict(Interval("auc", math.nan, math.nan, math.nan), 0.6)
    assert verdict_message("gate", undefined).endswith(
        ": below threshold (the metric is undefined in this run)"
    )
    met = compare_verdict(Interval("auc", 0.0, -0.01, 0.01, 0.005, 8), 0.02)
    assert verdict_message("gate", met).endswith(": within allowance")
