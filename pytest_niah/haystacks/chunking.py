"""Cutting a haystack into chunks for the chunk-max and chunk-mean scorings.

A chunk is a run of whole sentences of at most ``tokens`` tokens, the way retrieval
pipelines chunk documents; a sentence longer than that is cut into ``tokens``-token pieces.
A needle (one sentence, inserted at a sentence boundary) thus always sits whole in one
chunk when it fits, so a score reflects the model, not where a fixed window happened to
cut the needle.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from pytest_niah.inputs.text import sentence_starts

Span = tuple[int, int]


def chunk_bounds(text: str, spans: Sequence[Span], tokens: int) -> list[tuple[int, int]]:
    """Token ranges ``[start, stop)`` of the chunks of ``text``, in order, covering every token.

    Args:
        text: The haystack.
        spans: Character spans of its tokens (no special tokens).
        tokens: The most tokens in one chunk.

    Returns:
        Consecutive ranges, each at most ``tokens`` long; every range starts at a sentence
        start unless it continues a sentence longer than ``tokens``.
    """
    if tokens < 1:
        raise ValueError(f"chunk tokens must be at least 1, not {tokens}")
    if not spans:
        return []
    token_starts = [start for start, _ in spans]
    firsts = sorted({bisect_left(token_starts, c) for c in sentence_starts(text)} | {0})
    firsts = [i for i in firsts if i < len(spans)]
    sentences = zip(firsts, [*firsts[1:], len(spans)], strict=True)
    chunks: list[tuple[int, int]] = []
    open_start: int | None = None
    open_stop = 0
    for start, stop in sentences:
        if open_start is not None and stop - open_start <= tokens:
            open_stop = stop  # the sentence still fits the open chunk
            continue
        if open_start is not None:
            chunks.append((open_start, open_stop))
            open_start = None
        if stop - start > tokens:  # a sentence longer than a chunk: cut it
            chunks.extend((s, min(s + tokens, stop)) for s in range(start, stop, tokens))
        else:
            open_start, open_stop = start, stop
    if open_start is not None:
        chunks.append((open_start, open_stop))
    return chunks


def chunk_texts(text: str, spans: Sequence[Span], tokens: int) -> list[str]:
    """The chunks of ``text`` (see :func:`chunk_bounds`) as substrings of it."""
    return [text[spans[a][0] : spans[b - 1][1]] for a, b in chunk_bounds(text, spans, tokens)]
