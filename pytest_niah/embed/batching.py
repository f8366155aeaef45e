"""Padding-aware batching: group texts so each forward pass stays under a token budget.

A transformer pads every text of a batch to the batch's longest text, so a batch costs
``len(batch) * longest`` tokens of compute and memory. Sorting by length and packing
under a budget keeps long haystacks in small batches and short needles in large ones.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["token_budget_batches"]


def token_budget_batches(
    token_counts: Sequence[int], *, budget: int, max_batch: int = 512
) -> list[list[int]]:
    """Group text indices into batches whose padded size stays under a token budget.

    Indices are sorted by token count (longest first, ties by index), then packed
    greedily so that ``len(batch) * max(count in batch) <= budget``. A text longer than
    the budget gets a batch of its own; no batch holds more than ``max_batch`` texts.

    Args:
        token_counts: Tokens of each text (what the model reads, after truncation).
        budget: Most padded tokens per batch.
        max_batch: Most texts per batch, whatever their length.

    Returns:
        Batches of indices into ``token_counts``, longest texts first.

    Raises:
        ValueError: If ``budget`` or ``max_batch`` is below 1, or a count is negative.
    """
    if budget < 1 or max_batch < 1:
        raise ValueError(f"budget ({budget}) and max_batch ({max_batch}) must be at least 1")
    if any(count < 0 for count in token_counts):
        raise ValueError("token counts must not be negative")
    order = sorted(range(len(token_counts)), key=lambda i: (-token_counts[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current and not _fits(len(current) + 1, token_counts[current[0]], budget, max_batch):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def _fits(size: int, longest: int, budget: int, max_batch: int) -> bool:
    """Whether a batch of ``size`` texts padded to ``longest`` tokens is allowed."""
    return size <= max_batch and size * longest <= budget
