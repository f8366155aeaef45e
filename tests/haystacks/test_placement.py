"""Needle offsets: distinct, near their targets, between sentences where possible."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_niah.haystacks.placement import distinct_nearest, place, target_offsets


@given(filler=st.integers(min_value=0, max_value=10_000), positions=st.integers(1, 50))
def test_target_offsets_are_even_and_span_the_filler(filler, positions):
    targets = target_offsets(filler, positions)
    assert len(targets) == positions
    assert targets[0] == 0
    assert targets == sorted(targets)
    if positions > 1:
        assert targets[-1] == filler


@given(
    targets=st.lists(st.integers(0, 300), min_size=0, max_size=12).map(sorted),
    slots=st.sets(st.integers(0, 300), max_size=40).map(sorted),
)
def test_distinct_nearest_is_increasing_and_optimal(targets, slots):
    chosen = distinct_nearest(targets, slots)
    if len(slots) < len(targets):
        assert chosen is None
        return
    assert chosen is not None
    assert all(a < b for a, b in itertools.pairwise(chosen))
    assert set(chosen) <= set(slots)
    # Optimal: no single slot swap with an unused slot lowers the total distance.
    cost = sum(abs(c - t) for c, t in zip(chosen, targets, strict=True))
    for i in range(len(chosen)):
        low = chosen[i - 1] if i else -1
        high = chosen[i + 1] if i + 1 < len(chosen) else 10**9
        for s in slots:
            if low < s < high:
                assert cost <= cost - abs(chosen[i] - targets[i]) + abs(s - targets[i])


def test_sentences_when_they_keep_positions_near_their_targets():
    sentences = list(range(0, 1001, 25))
    placement = place(1000, 5, sentences, list(range(1001)))
    assert placement.between == "sentences"
    assert placement.offsets == (0, 250, 500, 750, 1000)


@pytest.mark.parametrize(("gap", "between"), [(25, "sentences"), (26, "words")])
def test_sentences_only_within_half_the_spacing_of_each_target(gap, between):
    """Three positions in 100 tokens: targets 0, 50 and 100, spacing 50. A sentence gap 25
    tokens from the middle target is near enough; 26 is nearer the neighbouring target's
    half, so the needles go between words."""
    # Found (mutation seed 1016273348, placement.py:66): twice the spacing, not half of it,
    # took sentence gaps nearer a neighbour's target.
    placement = place(100, 3, [0, 50 - gap, 100], list(range(101)))
    assert placement.between == between
    assert placement.offsets == ((0, 50 - gap, 100) if between == "sentences" else (0, 50, 100))


def test_words_when_sentences_are_too_few():
    # Found: 10 positions in a short haystack collapsed onto a few sentence gaps.
    placement = place(115, 10, [0, 40, 80, 115], list(range(116)))
    assert placement.between == "words"
    assert len(set(placement.offsets)) == 10
    assert placement.duplicate_of == (None,) * 10


def test_two_targets_nearest_one_gap_still_get_gaps_of_their_own():
    """Targets 3 and 7 are both nearest gap 5 (7 ties 5 and 9): with enough gaps each
    position gets its own (5 and 9), none is marked a repeat."""
    placement = place(10, 4, [0, 10], [0, 5, 9, 10])
    assert placement.offsets == (0, 5, 9, 10)
    assert placement.duplicate_of == (None,) * 4


def test_fewer_gaps_than_positions_marks_the_repeats():
    placement = place(4, 10, [0, 4], [0, 1, 2, 3, 4])
    assert len(placement.offsets) == 10
    repeats = [i for i, d in enumerate(placement.duplicate_of) if d is not None]
    assert repeats
    for i in repeats:
        first = placement.duplicate_of[i]
        assert placement.offsets[first] == placement.offsets[i] and first < i


def _distinct_nearest_reference(targets, slots):
    """The dynamic programme written out loop by loop (the vectorised one must match it)."""
    n, m = len(targets), len(slots)
    if n > m:
        return None
    if n == 0:
        return []
    inf = float("inf")
    cost = [[inf] * m for _ in range(n)]
    back = [[-1] * m for _ in range(n)]
    for j in range(m):
        cost[0][j] = abs(slots[j] - targets[0])
    for i in range(1, n):
        best, best_j = inf, -1
        for j in range(i, m):
            if cost[i - 1][j - 1] < best:
                best, best_j = cost[i - 1][j - 1], j - 1
            cost[i][j] = best + abs(slots[j] - targets[i])
            back[i][j] = best_j
    j = min(range(n - 1, m), key=lambda k: (cost[n - 1][k], k))
    chosen = [0] * n
    for i in range(n - 1, -1, -1):
        chosen[i] = slots[j]
        j = back[i][j]
    return chosen


@given(
    targets=st.lists(st.integers(0, 60), min_size=0, max_size=12).map(sorted),
    slots=st.sets(st.integers(0, 60), max_size=30).map(sorted),
)
@example(targets=[5, 10], slots=[4, 6, 11])  # 4 and 6 tie for the first target
def test_distinct_nearest_breaks_ties_as_the_loop_does(targets, slots):
    # Small ranges make ties common: the chosen slots (hence haystack bytes) must not move.
    assert distinct_nearest(targets, slots) == _distinct_nearest_reference(targets, slots)
