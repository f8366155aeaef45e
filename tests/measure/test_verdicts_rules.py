"""Rules of ``measure/verdicts.py`` that mutants found unchecked, beside test_verdicts.py."""

from __future__ import annotations

import math

from pytest_niah.measure.resolve_advice import MDE_Z, groups_to_resolve, realistic_groups
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdict_text import verdict_message
from pytest_niah.measure.verdicts import compare_verdict, minimum_verdict


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


def test_as_many_groups_as_is_realistic_are_still_suggested():
    # Found (mutation sweep mutA, verdicts.py:287 `needed <= realistic` -> `<`): a fix that
    # needs exactly the realistic most (1,000 groups, from 100 now) is suggested as such.
    effect = 0.7 - 0.6
    se = effect * math.sqrt(9.995) / MDE_Z  # needs 999.5 groups: rounded up, 1,000
    assert groups_to_resolve(100, se, effect) == realistic_groups(100) == 1000
    verdict = minimum_verdict(Interval("auc", 0.7, 0.5, 0.9, se, 100), 0.6)
    assert verdict.resolve.startswith("about 1000 needle groups (now 100) would resolve 0.1;")


def test_only_a_comparison_that_knows_both_cell_counts_can_pair_a_minority():
    # Found (mutation sweep mutA, verdicts.py:102 a clause dropped, :103 `return False` ->
    # `None`): unknown paired cells are no minority (no error), and the answer is a bool.
    unknown = compare_verdict(Interval("auc", 0.0, -0.01, 0.01, 0.005, 8), 0.02, run_cells=10)
    assert unknown.pairs_a_minority is False and unknown.state == "within allowance"
    paired_only = compare_verdict(Interval("auc", 0.0, -0.01, 0.01, 0.005, 8), 0.02, paired_cells=4)
    assert paired_only.pairs_a_minority is False
    assert minimum_verdict(Interval("auc", 0.7, 0.65, 0.75, 0.02, 8), 0.6).pairs_a_minority is False
    few = compare_verdict(
        Interval("auc", 0.0, -0.01, 0.01, 0.005, 8), 0.02, paired_cells=4, run_cells=10
    )
    assert few.pairs_a_minority is True and few.state == "inconclusive"


def test_a_line_names_the_paired_cells_only_when_both_counts_are_known():
    # Found (mutation sweep mutA, verdicts.py:314 `and` -> `or`, either clause dropped).
    change = Interval("auc", 0.0, -0.01, 0.01, 0.005, 8)
    for paired, run in ((4, None), (None, 10), (None, None)):
        verdict = compare_verdict(change, 0.02, paired_cells=paired, run_cells=run)
        assert "paired" not in verdict_message("gate", verdict)
    both = compare_verdict(change, 0.02, paired_cells=6, run_cells=10)
    assert "AUC changed +0.000 [-0.010, 0.010] (paired 6 of 10 cells)," in verdict_message(
        "gate", both
    )
