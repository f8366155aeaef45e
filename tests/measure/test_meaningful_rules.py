"""measure/meaningful.py: when the normalized similarity means nothing (#46.4 mutation draw)."""

from __future__ import annotations

import dataclasses

from test_gates import metric_row

from pytest_niah.measure.meaningful import MOSTLY_LEFT_OUT, normalized_not_meaningful


def test_a_row_with_most_of_its_cases_left_out_is_not_meaningful():
    # Found (mutation seed 1954973815, meaningful.py:37 `return MOSTLY_LEFT_OUT` -> None):
    # a row whose normalized similarity left out more than half its counted cases says so.
    row = metric_row()
    counted = row.n_cases
    half = dataclasses.replace(row, norm_excluded=counted // 2)
    more = dataclasses.replace(row, norm_excluded=counted // 2 + 1)
    assert normalized_not_meaningful(half) is None
    assert normalized_not_meaningful(more) == MOSTLY_LEFT_OUT
    # Duplicates and invalid cases are not counted: the same excluded cases are then most.
    fewer = dataclasses.replace(half, duplicates=1)
    assert normalized_not_meaningful(fewer) == MOSTLY_LEFT_OUT
    # Found (mutation seed 1704312573, meaningful.py:35 `- row.invalid` -> `+`): invalid
    # cases are taken out of the count as duplicates are.
    assert normalized_not_meaningful(dataclasses.replace(half, invalid=1)) == MOSTLY_LEFT_OUT
