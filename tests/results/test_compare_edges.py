"""Edges of the comparison rules (pytest_niah.results.compare) that mutation testing found open.

A grid of one position; the coverage rule exactly at its boundary (a window that ends where
the last possible needle start begins); the coverage message naming both windows; and the
comparison's records staying immutable.
"""

from __future__ import annotations

import dataclasses

import pytest
from niah_synthetic import GROUPS, LENGTHS, NEEDLE_TOKENS, model, results, scored

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.results.compare import Comparison, compare_results
from pytest_niah.results.niah_results import NiahResults

AUC_002 = Allowance("auc", 0.02, relative=False)


def compare(current, baseline, **kwargs):
    return compare_results(current, baseline, n_resamples=50, seed=0, **kwargs)


@pytest.mark.parametrize("positions", [1, 2])
def test_grids_of_one_or_two_positions_pair_with_themselves(positions):
    # One position sits at depth 0 (there is no spacing to divide by); two at 0 and 1.
    cases, negatives = scored(positions=positions)
    run = results(cases, negatives, positions=positions)
    comparison = compare(run, run)
    cells = len(GROUPS) * positions
    assert comparison.paired == {("literal", "whole", n): cells for n in LENGTHS}
    assert comparison.unpaired_current == comparison.unpaired_baseline == 0
    assert comparison.delta("literal", LENGTHS[0], "auc").delta == 0.0


def test_the_first_position_pairs_across_grids_of_any_size():
    # Position 0 starts the filler in every grid, a one-position grid's included.
    one = results(*scored(positions=1), positions=1)
    three = results(*scored(positions=3), positions=3)
    comparison = compare(one, three, allow=("positions",))
    assert comparison.paired == {("literal", "whole", n): len(GROUPS) for n in LENGTHS}
    assert comparison.unpaired_baseline == 2 * len(GROUPS) * len(LENGTHS)


def test_a_slice_this_run_lacks_is_unpaired_with_no_cells_of_its_own():
    comparison = Comparison(deltas=(), paired={}, unpaired_current=0, unpaired_baseline=0)
    (verdict,) = comparison.gate_verdicts([AUC_002], ("literal", "whole", 1024))
    assert (verdict.paired_cells, verdict.run_cells) == (0, 0)
    assert verdict.outcome("pass") == "fail"


def short_run(max_tokens: int | None) -> NiahResults:
    # Length 128, needles of 16 tokens: a needle starts at token 112 at the latest.
    cases, negatives = scored(lengths=(128,), positions=10, offset=lambda n, p, _: p * 12)
    return results(
        cases, negatives, model_info=model(max_tokens=max_tokens), lengths=(128,), positions=10
    )


def test_a_window_ending_past_the_last_possible_needle_start_leaves_nothing_to_probe():
    assert 128 - NEEDLE_TOKENS == 112
    # Windows of 113 and 254 tokens both read every token a needle can start at (0..112):
    # no needle could tell them apart, so the length is resolved whatever the offsets.
    at_boundary = compare(short_run(113), short_run(254)).delta("literal", 128, "auc")
    assert at_boundary.unresolved == ""
    # One token shorter, a needle starting at 112 would be read by one model only; the grid
    # has none there (offsets 0, 12, ..., 108), so the length cannot show the difference.
    short = compare(short_run(112), short_run(254)).delta("literal", 128, "auc")
    assert short.unresolved == (
        "the two models read 112 and 254 tokens, and no needle of this grid sits between "
        "token 112 and 128 at this length"
    )


def test_the_shortest_needle_decides_how_late_a_needle_can_start():
    # Needles of 16 tokens can start up to 112, one of 20 tokens only up to 108: a window
    # of 110 still leaves room (110..112) for the shorter ones, which no needle probes.
    cases, negatives = scored(lengths=(128,), positions=10, offset=lambda n, p, _: p * 12)
    cases = [dataclasses.replace(cases[0], needle_tokens=20), *cases[1:]]
    runs = [
        results(cases, negatives, model_info=model(max_tokens=w), lengths=(128,), positions=10)
        for w in (110, 254)
    ]
    assert (
        compare(*runs)
        .delta("literal", 128, "auc")
        .unresolved.startswith("the two models read 110 and 254 tokens")
    )


def test_the_coverage_message_names_each_window_or_all():
    # Offsets 0, 20, ..., 180: none between 254 and the end of either length.
    cases, negatives = scored(positions=10, offset=lambda n, p, _: p * 20)
    windowed = results(cases, negatives, model_info=model(max_tokens=254), positions=10)
    whole = results(cases, negatives, model_info=model(max_tokens=None), positions=10)
    delta = compare(windowed, whole).delta("literal", 1024, "auc")
    assert delta.unresolved == (
        "the two models read 254 and all tokens, and no needle of this grid sits between "
        "token 254 and 1024 at this length"
    )
    reverse = compare(whole, windowed).delta("literal", 4096, "auc")
    assert reverse.unresolved.startswith("the two models read all and 254 tokens")


def test_a_comparison_and_its_deltas_are_immutable():
    run = results()
    comparison = compare(run, run)
    delta = comparison.deltas[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        delta.delta = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        comparison.unpaired_current = 3  # type: ignore[misc]
    # Frozen deltas hash by value: equal changes are one in a set.
    assert len({delta, dataclasses.replace(delta)}) == 1
