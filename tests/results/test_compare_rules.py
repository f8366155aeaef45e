"""Rules of ``results/compare.py`` that mutants found unchecked, beside test_compare*.py."""

from __future__ import annotations

import dataclasses

import pytest
from niah_synthetic import results, scored

from pytest_niah.errors import CompareError
from pytest_niah.results.compare import compare_results


def test_a_meaningful_normalized_change_carries_empty_reasons_not_null():
    # Found (mutation sweep mutA, compare.py:261 `... or ""` -> `return None`): where both
    # runs' normalized similarity means something, its reasons are "" (a string, as the
    # field's type says), also in the comparison's JSON.
    run = results()
    comparison = compare_results(run, run, n_resamples=0, seed=0)
    normalized = [d for d in comparison.deltas if d.metric == "normalized"]
    assert normalized
    for delta in normalized:
        assert (delta.current_not_meaningful, delta.baseline_not_meaningful) == ("", "")
        assert delta.not_meaningful == ""
    for data in comparison.to_dict()["deltas"]:
        assert data["current_not_meaningful"] == data["baseline_not_meaningful"] == ""


def test_a_run_whose_normalized_similarity_is_undefined_carries_empty_reasons_too():
    # Found (mutation sweep mutA, compare.py:260 `return ""` -> `return None`): undefined
    # normalized similarity (every needle alone below the floor) has no n/m reason either.
    cases, negatives = scored(cos_qn=0.05)
    run = results(cases, negatives)
    data = compare_results(run, run, n_resamples=0, seed=0).to_dict()
    normalized = [d for d in data["deltas"] if d["metric"] == "normalized"]
    assert normalized and all(d["current"] is None for d in normalized)
    assert all(
        d["current_not_meaningful"] == d["baseline_not_meaningful"] == "" for d in normalized
    )


def test_runs_of_other_needle_groups_are_refused_saying_they_share_no_cell_and_why():
    # Found (mutation sweep mutA, compare.py:197 the stand-in reason dropped): where the
    # draws are not the cause, the refusal says what the runs do not share.
    mine = results(*scored(groups=("pet-05",)))
    other = results(*scored(groups=("travel-06",)))
    with pytest.raises(CompareError) as info:
        compare_results(mine, other, n_resamples=0, seed=0, source="base.json")
    assert info.value.problem == (
        "--niah-compare: the baseline (base.json) shares no cell with this run (no needle "
        "group, arm, order, length and position in common)"
    )
    assert info.value.hint == "compare with a run of the same needle groups and grid"


def test_a_run_missing_its_row_at_a_length_carries_empty_reasons_there():
    # Found (mutation sweep mutA, compare.py:258 `return ""` -> `return None`): a run whose
    # tables lack a length's row (a results file written without it) has no n/m reason there.
    run = results()
    rowless = dataclasses.replace(run, tables=tuple(r for r in run.tables if r.length != 4096))
    comparison = compare_results(rowless, run, n_resamples=0, seed=0)
    at_4096 = [d for d in comparison.deltas if d.metric == "normalized" and d.length == 4096]
    assert at_4096 and all(d.current_not_meaningful == "" for d in at_4096)
