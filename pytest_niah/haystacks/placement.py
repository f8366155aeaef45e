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
    go to the earlier slot. A dynamic programme over (target, slot): O(targets x slots).
    """
    n, m = len(targets), len(slots)
    if n > m:
        return None
    if n == 0:
        return []
    inf = float("inf")
    # cost[i][j]: best total for targets[:i+1] with target i at slot j.
    cost = [[inf] * m for _ in range(n)]
    back = [[-1] * m for _ in range(n)]
    for j in range(m):
        cost[0][j] = abs(slots[j] - targets[0])
    for i in range(1, n):
        best, best_j = inf, -1
        row, previous = cost[i], cost[i - 1]
        for j in range(i, m):
            if previous[j - 1] < best:
                best, best_j = previous[j - 1], j - 1
            row[j] = best + abs(slots[j] - targets[i])
            back[i][j] = best_j
    j = min(range(n - 1, m), key=lambda k: (cost[n - 1][k], k))
    chosen = [0] * n
    for i in range(n - 1, -1, -1):
        chosen[i] = slots[j]
        j = back[i][j]
    return chosen
