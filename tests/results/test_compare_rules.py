"""Rules of ``results/compare.py`` that mutants found unchecked, beside test_compare*.py."""

from __future__ import annotations

from niah_synthetic import results

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
