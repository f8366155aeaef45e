"""Where the needles of one haystack length go: distinct offsets, each near its target.

The study puts needles at evenly spaced positions, start to end. A needle goes between
sentences where that keeps each position near its target; where sentences are too long
for that (short haystacks: 10 positions in 128 tokens), it goes between words. Every
position of a haystack length then gets its own offset: no two positions are the same
haystack counted twice. Only where the filler has fewer gaps than positions do some
positions share an offset; :class:`Placement` says which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


def target_offsets(filler_tokens: int, positions: int) -> list[int]:
    """Evenly spaced target token offsets, the first at 0 and the last at the end."""
    if positions == 1:
        return [0]
    return [round(i * filler_tokens / (positions - 1)) for i in range(positions)]


@dataclass(frozen=True)
class Placement:
    """The chosen offset of every position, and which positions share one.

    Attributes:
        offsets: Token offset (a slot) per position, non-decreasing.
        between: ``"sentences"`` or ``"words"``: which gaps the needles went into.
        duplicate_of: Per position, the first position with the same offset, or ``None``.
    """

    offsets: tuple[int, ...]
    between: str
    duplicate_of: tuple[int | None, ...]


def place(
    filler_tokens: int,
    positions: int,
    sentence_slots: Sequence[int],
    word_slots: Sequence[int] | Callable[[], Sequence[int]],
) -> Placement:
    """Choose an offset for every position.

    Sentence gaps are used when they give every position its own offset within half the
    spacing of its target (else a position would sit nearer its neighbour's target than its
    own); otherwise word gaps (which include the sentence gaps).

    Args:
        filler_tokens: Tokens of the filler the needle goes into.
        positions: How many evenly spaced positions.
        sentence_slots: Token offsets where a sentence starts (0 and the end included).
        word_slots: Token offsets where a word starts, or a function giving them (called
            only when sentence gaps will not do: finding word starts costs a pass over the
            filler's tokens).
    """
    targets = target_offsets(filler_tokens, positions)
    spacing = filler_tokens / (positions - 1) if positions > 1 else float(filler_tokens)
    sentences = sorted(set(sentence_slots))
    chosen = distinct_nearest(targets, sentences)
    if chosen is not None and max(abs(c - t) for c, t in zip(chosen, targets, strict=True)) <= (
        spacing / 2
    ):
        return Placement(tuple(chosen), "sentences", (None,) * positions)
    if callable(word_slots):
        word_slots = word_slots()
    words = sorted(set(sentence_slots) | set(word_slots))
    chosen = distinct_nearest(targets, words)
    if chosen is not None:
        return Placement(tuple(chosen), "words", (None,) * positions)
    # Fewer gaps than positions: the nearest gap each, repeats marked.
    nearest = [_nearest(words, t) for t in targets]
    first: dict[int, int] = {}
    duplicates = tuple(
        None if first.setdefault(offset, i) == i else first[offset]
        for i, offset in enumerate(nearest)
    )
    return Placement(tuple(nearest), "words", duplicates)


def _nearest(slots: Sequence[int], target: int) -> int:
    """The slot nearest ``target`` (the earlier one on a tie)."""
    return min(slots, key=lambda s: (abs(s - target), s))


def distinct_nearest(targets: Sequence[int], slots: Sequence[int]) -> list[int] | None:
    """Strictly increasing slots, one per target, minimising the total distance to them.

    Targets and slots are sorted; ``None`` when there are fewer slots than targets. Ties
    go to the earlier slot. A dynamic programme over (target, slot), one vectorised row per
    target: O(targets x slots) in numpy (a long filler has thousands of word gaps).
    """
    n, m = len(targets), len(slots)
    if n > m:
        return None
    if n == 0:
        return []
    where = np.asarray(slots, dtype=np.float64)
    index = np.arange(m)
    # cost[j]: best total for the targets so far with the last one at slot j.
    cost = np.abs(where - targets[0])
    back = np.full((n, m), -1, dtype=np.int64)
    for i in range(1, n):
        # The best earlier slot k < j, and the first k reaching it (ties: the earlier slot).
        best = np.minimum.accumulate(cost)
        before = np.concatenate(([np.inf], best[:-1]))
        first = np.maximum.accumulate(np.where(cost < before, index, -1))
        row = np.full(m, np.inf)
        row[i:] = best[i - 1 : m - 1] + np.abs(where[i:] - targets[i])
        back[i, i:] = first[i - 1 : m - 1]
        cost = row
    j = int(n - 1 + np.argmin(cost[n - 1 :]))
    chosen = [0] * n
    for i in range(n - 1, -1, -1):
        chosen[i] = slots[j]
        j = int(back[i, j])
    return chosen
