"""Haystacks of exact token lengths, with one needle at a sentence boundary, plus controls.

For each needle group and length one seeded *stream* of book sentences is drawn; the
control of that group and length is the stream's first L tokens, and every needle
haystack is the stream's first L - n tokens with the needle (n tokens) inserted at the
sentence boundary nearest its target position. Needle haystacks and their control thus
share their filler, so a score difference is the needle's doing.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.grid import case_id, control_id
from pytest_niah.inputs.corpus import Corpus
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet

Span = tuple[int, int]
SpansFn = Callable[[Sequence[str]], list[list[Span]]]

MAX_SNIPPET_TOKENS = 249  # the study's snippets are under 250 tokens
MIN_SNIPPET_TOKENS = 48
MAX_CONSECUTIVE_REJECTS = 2000
_FIT_ATTEMPTS = 6


@dataclass(frozen=True)
class Haystack:
    """One text to embed as a document, with where its needle sits.

    ``needle_*`` fields are ``None`` for controls. Offsets count tokens of the model's
    tokenizer without special tokens; ``needle_char`` is a character offset.
    """

    id: str
    group_id: str
    length: int
    text: str
    kind: str | None = None
    order: str | None = None
    position: int | None = None
    control: int | None = None
    name: str | None = None
    needle: str | None = None
    needle_offset: int | None = None
    needle_tokens: int | None = None
    needle_char: int | None = None

    @property
    def is_control(self) -> bool:
        """True for a no-needle haystack."""
        return self.needle is None


def target_offsets(filler_tokens: int, positions: int) -> list[int]:
    """Evenly spaced target token offsets, the first at 0 and the last at the end."""
    if positions == 1:
        return [0]
    return [round(i * filler_tokens / (positions - 1)) for i in range(positions)]


def stable_key(*parts: object) -> int:
    """A 64-bit integer from text parts, the same in every process (unlike ``hash``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def rng_for(seed: int, *parts: object) -> np.random.Generator:
    """An independent generator for one named random choice of one run."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stable_key(*parts)])))


@dataclass
class _Stream:
    sentences: list[str]
    counts: list[int]


@dataclass
class HaystackBuilder:
    """Builds every haystack of a run.

    Args:
        corpus: Books to draw snippets from.
        needle_set: The (already selected) needle groups; all their audit terms are banned.
        spans: The model tokenizer's span function.
        seed: Seed of every random choice.
    """

    corpus: Corpus
    needle_set: NeedleSet
    spans: SpansFn
    seed: int
    _counts: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    _used: int = 0
    _rejected: int = 0
    _too_long: int = 0
    _hits: Counter[str] = field(default_factory=Counter, repr=False)
    _fillers: dict[tuple[str, int, int], str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._books = [book.sentences for book in self.corpus.books if book.sentences]
        if not self._books:
            raise HaystackError(
                f"corpus {self.corpus.name!r} has no sentences to build haystacks from; point "
                "--niah-corpus at a folder of plain-text books"
            )
        terms = sorted({t for g in self.needle_set.groups for t in g.audit_terms})
        self._leak = (
            re.compile(r"\b(" + "|".join(map(re.escape, terms)) + r")\b", re.IGNORECASE)
            if terms
            else None
        )

    def audit(self) -> AuditReport:
        """Counts so far."""
        return AuditReport(
            snippets_used=self._used,
            snippets_rejected=self._rejected,
            sentences_too_long=self._too_long,
            term_hits=tuple(sorted(self._hits.items())),
        )

    def check_corpus_size(self, longest: int) -> None:
        """Fail early when the corpus cannot fill the longest haystack without repeating itself."""
        # ~4 characters per token is a generous upper bound for English subword tokenizers.
        chars = sum(len(s) for book in self._books for s in book)
        if chars < longest * 4 * 2:
            raise HaystackError(
                f"corpus {self.corpus.name!r} holds about {chars // 4:,} tokens of text, too "
                f"little for "
                f"haystacks of {longest:,} tokens (it needs at least twice that); add books to the "
                "folder or lower the longest --niah-lengths value"
            )

    def build(
        self,
        lengths: Sequence[int],
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
    ) -> list[Haystack]:
        """All needle haystacks and controls, in a deterministic order."""
        self.check_corpus_size(max(lengths))
        haystacks: list[Haystack] = []
        for group in self.needle_set.groups:
            for length in lengths:
                haystacks.extend(
                    self.build_group_length(group, length, positions, kinds, orders, controls)
                )
        return haystacks

    def build_group_length(
        self,
        group: NeedleGroup,
        length: int,
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
    ) -> list[Haystack]:
        """The needle haystacks and controls of one group at one length."""
        names = [self._name(group.id, length, p) for p in range(positions)]
        needles = {
            (kind, order, p): group.needle(kind, order, names[p])
            for kind in kinds
            for order in orders
            for p in range(positions)
        }
        needle_counts = dict(
            zip(needles, map(len, self.spans(list(needles.values()))), strict=True)
        )
        longest_needle = max(needle_counts.values())
        if longest_needle >= length:
            raise HaystackError(
                f"needle group {group.id!r}: a needle of {longest_needle} tokens does not fit a "
                f"haystack of {length} tokens; shorten the needle or drop length {length} from "
                "--niah-lengths"
            )
        stream = self._stream(group.id, length, 0, length + longest_needle)
        out = [self._control(group.id, length, 0, stream)]
        for extra in range(1, controls):
            out.append(
                self._control(
                    group.id, length, extra, self._stream(group.id, length, extra, length)
                )
            )
        # First tries of every needle haystack, tokenized in one batch (the tokenizer
        # spreads a batch over the CPU's cores); a rare miss is retried one by one.
        first = {
            key: self._compose(
                stream, group.id, length, key[2], positions, needle, length - needle_counts[key]
            )
            for key, needle in needles.items()
        }
        first_spans = dict(zip(first, self.spans([t for t, _ in first.values()]), strict=True))
        for (kind, order, position), needle in needles.items():
            out.append(
                self._with_needle(
                    stream,
                    group.id,
                    length,
                    kind,
                    order,
                    position,
                    positions,
                    names[position],
                    needle,
                    needle_counts[kind, order, position],
                    first=(*first[kind, order, position], first_spans[kind, order, position]),
                )
            )
        return out

    # -- pieces ---------------------------------------------------------------------------

    def _name(self, group_id: str, length: int, position: int) -> str:
        # One name per (group, length, position), shared by orders and arms so they pair up.
        rng = rng_for(self.seed, "name", group_id, length, position)
        return self.needle_set.names[int(rng.integers(len(self.needle_set.names)))]

    def _sentence_counts(self, book: int, start: int, stop: int) -> list[int]:
        missing = [i for i in range(start, stop) if (book, i) not in self._counts]
        if missing:
            spans = self.spans([self._books[book][i] for i in missing])
            for i, s in zip(missing, spans, strict=True):
                self._counts[book, i] = len(s)
        return [self._counts[book, i] for i in range(start, stop)]

    def _snippet(self, rng: np.random.Generator) -> tuple[list[str], list[int]] | None:
        """One run of consecutive sentences under the token budget, or None if rejected."""
        book = int(rng.integers(len(self._books)))
        sentences = self._books[book]
        start = int(rng.integers(len(sentences)))
        budget = int(rng.integers(MIN_SNIPPET_TOKENS, MAX_SNIPPET_TOKENS + 1))
        stop = min(start + 24, len(sentences))
        counts = self._sentence_counts(book, start, stop)
        chosen: list[str] = []
        chosen_counts: list[int] = []
        total = 0
        for offset, count in enumerate(counts):
            if count > MAX_SNIPPET_TOKENS:
                self._too_long += 1
                break
            if total + count > budget:
                break
            chosen.append(sentences[start + offset])
            chosen_counts.append(count)
            total += count
        if not chosen:
            return None
        if self._leak is not None:
            hits = {m.group(1).lower() for m in self._leak.finditer(" ".join(chosen))}
            if hits:
                self._rejected += 1
                self._hits.update(hits)
                return None
        self._used += 1
        return chosen, chosen_counts

    def _stream(self, group_id: str, length: int, control: int, tokens: int) -> _Stream:
        rng = rng_for(self.seed, "stream", group_id, length, control)
        stream = _Stream([], [])
        misses = 0
        while sum(stream.counts) < tokens + 1:
            snippet = self._snippet(rng)
            if snippet is None:
                misses += 1
                if misses > MAX_CONSECUTIVE_REJECTS:
                    raise HaystackError(
                        f"corpus {self.corpus.name!r}: {misses} snippets in a row were rejected by "
                        "the "
                        "leak audit or were too long; the books mention the needle groups' key "
                        "words too often (see the audit's term counts): use other books, or needle "
                        "groups with more distinctive keywords"
                    )
                continue
            misses = 0
            stream.sentences.extend(snippet[0])
            stream.counts.extend(snippet[1])
        return stream

    def _fit(self, parts: list[str], tokens: int, what: str) -> str:
        """Join sentences and cut to exactly ``tokens`` tokens, verified by re-tokenizing."""
        text = " ".join(parts)
        for _ in range(_FIT_ATTEMPTS):
            spans = self.spans([text])[0]
            if len(spans) == tokens:
                return text
            if len(spans) < tokens:
                break
            text = text[: spans[tokens - 1][1]]
        raise HaystackError(
            f"{what}: could not cut the text to exactly {tokens} tokens with this tokenizer "
            "(its token count is not stable under truncation); report this model to pytest-niah"
        )

    def _control(self, group_id: str, length: int, control: int, stream: _Stream) -> Haystack:
        cid = control_id(group_id, length, control)
        parts = _prefix(stream, length + 8)
        return Haystack(
            id=cid,
            group_id=group_id,
            length=length,
            text=self._fit(parts, length, cid),
            control=control,
        )

    def _compose(
        self,
        stream: _Stream,
        group_id: str,
        length: int,
        position: int,
        positions: int,
        needle: str,
        filler_tokens: int,
    ) -> tuple[str, int]:
        """A candidate text (filler of ``filler_tokens`` with the needle) and the needle's char."""
        # Fillers depend only on the needle's token count: positions and orders share them.
        key = (group_id, length, filler_tokens)
        if key not in self._fillers:
            what = f"{group_id} at {length} tokens"
            self._fillers[key] = self._fit(_prefix(stream, filler_tokens + 8), filler_tokens, what)
        filler = self._fillers[key]
        sentences, bounds = _cut_sentences(filler, stream, filler_tokens)
        target = target_offsets(filler_tokens, positions)[position]
        slot = min(range(len(bounds)), key=lambda i: (abs(bounds[i] - target), i))
        before = " ".join(sentences[:slot])
        text = " ".join(p for p in (before, needle, " ".join(sentences[slot:])) if p)
        return text, len(before) + 1 if before else 0

    def _with_needle(
        self,
        stream: _Stream,
        group_id: str,
        length: int,
        kind: str,
        order: str,
        position: int,
        positions: int,
        name: str,
        needle: str,
        needle_tokens: int,
        first: tuple[str, int, list[Span]],
    ) -> Haystack:
        """The needle haystack from its batch-tokenized ``first`` try, retried if it missed."""
        hid = case_id(group_id, kind, order, length, position)
        filler_tokens = length - needle_tokens
        for attempt in range(_FIT_ATTEMPTS):
            if attempt == 0:
                text, needle_char, spans = first
            else:
                text, needle_char = self._compose(
                    stream, group_id, length, position, positions, needle, filler_tokens
                )
                spans = self.spans([text])[0]
            if len(spans) == length:
                offset = next(i for i, (start, _) in enumerate(spans) if start >= needle_char)
                inside = sum(
                    1
                    for start, end in spans
                    if needle_char <= start and end <= needle_char + len(needle)
                )
                if inside != needle_tokens:
                    raise HaystackError(
                        f"{hid}: the needle is tokenized differently inside the haystack"
                    )
                return Haystack(
                    id=hid,
                    group_id=group_id,
                    length=length,
                    text=text,
                    kind=kind,
                    order=order,
                    position=position,
                    name=name,
                    needle=needle,
                    needle_offset=offset,
                    needle_tokens=needle_tokens,
                    needle_char=needle_char,
                )
            filler_tokens -= len(spans) - length  # joins merged or split tokens: correct and retry
        raise HaystackError(
            f"{hid}: could not reach exactly {length} tokens with the needle inserted"
        )


def _prefix(stream: _Stream, tokens: int) -> list[str]:
    """The fewest leading sentences holding at least ``tokens`` tokens."""
    total = 0
    for i, count in enumerate(stream.counts):
        total += count
        if total >= tokens:
            return stream.sentences[: i + 1]
    return list(stream.sentences)


def _cut_sentences(filler: str, stream: _Stream, tokens: int) -> tuple[list[str], list[int]]:
    """Split a fitted filler back into its sentences and the token offsets of their boundaries.

    The last piece may be a truncated sentence; every boundary is a sentence boundary.
    """
    sentences: list[str] = []
    bounds = [0]
    cursor = 0
    for sentence, count in zip(stream.sentences, stream.counts, strict=False):
        if cursor >= len(filler):
            break
        piece = filler[cursor : cursor + len(sentence)]
        sentences.append(piece)
        cursor += len(sentence) + 1
        bounds.append(bounds[-1] + count)
    # The last piece is usually cut short: the final bound is the filler's true end.
    bounds[-1] = tokens
    return sentences, bounds
