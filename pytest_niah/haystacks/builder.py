"""Haystacks of exact token lengths, with one needle each, plus no-needle controls.

For each needle group and length one seeded *stream* of book sentences is drawn; the
control of that group and length is the stream's first L tokens, and every needle haystack
is the stream's first L - n tokens with the needle (n tokens) inserted at a gap chosen by
:mod:`pytest_niah.haystacks.placement`. Needle haystacks and their control thus share their
filler, so a score difference is the needle's doing.

Everything a haystack depends on is keyed by (seed, group, length, ...) and by the *whole*
needle set (the leak audit bans every group's terms), never by which groups a run selects:
a group's haystacks are the same in a run of all groups and in a run of that group alone.
Every haystack is tokenized once, in one batch per group and length, and checked: exactly L
tokens, the needle at its recorded token offset.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.grid import case_id, control_id
from pytest_niah.haystacks.placement import Placement, place
from pytest_niah.haystacks.sentence_counts import SentenceCounts, counts_file
from pytest_niah.haystacks.tokens import Encoded, Tokenizer
from pytest_niah.inputs.corpus import Corpus
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet
from pytest_niah.inputs.words import TermMatcher

MAX_SNIPPET_TOKENS = 249  # the study's snippets are under 250 tokens
MIN_SNIPPET_TOKENS = 48
SNIPPET_SENTENCES = 24  # at most this many consecutive sentences per snippet
MAX_CONSECUTIVE_REJECTS = 2000
_FIT_ATTEMPTS = 6


@dataclass(frozen=True)
class Haystack:
    """One text to embed as a document, with where its needle sits.

    ``needle_*`` fields are ``None`` for controls. Offsets count tokens of the model's
    tokenizer without special tokens; ``needle_char`` is a character offset.

    Attributes:
        control_id: The control sharing this haystack's filler (itself, for a control).
        duplicate_position: The earlier position with the same needle at the same offset,
            when the filler had fewer gaps than positions; such a case is not counted twice.
    """

    id: str
    group_id: str
    length: int
    text: str
    control_id: str
    kind: str | None = None
    order: str | None = None
    position: int | None = None
    control: int | None = None
    name: str | None = None
    needle: str | None = None
    needle_offset: int | None = None
    needle_tokens: int | None = None
    needle_char: int | None = None
    duplicate_position: int | None = None

    @property
    def is_control(self) -> bool:
        """True for a no-needle haystack."""
        return self.needle is None


@dataclass(frozen=True)
class Block:
    """The haystacks of one needle group at one length, with their tokens (same order)."""

    group_id: str
    length: int
    haystacks: tuple[Haystack, ...]
    encodings: tuple[Encoded, ...]
    placements: tuple[tuple[int, str], ...] = ()  # (needle tokens, "sentences"|"words")


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
class _Filler:
    """A filler cut to an exact token count, and the gaps a needle can go into."""

    text: str
    encoding: Encoded
    tokens: int
    sentence_slots: list[int]
    _word_slots: list[int] | None = None

    def word_slots(self) -> list[int]:
        if self._word_slots is None:
            slots = [0, self.tokens]
            for i in range(1, self.tokens):
                span = self.encoding.token_to_chars(i)
                if span is not None and span[0] > 0 and self.text[span[0] - 1].isspace():
                    slots.append(i)
            self._word_slots = sorted(set(slots))
        return self._word_slots

    def char_of(self, slot: int) -> int:
        """Where in the text a needle at token ``slot`` goes."""
        if slot >= self.tokens:
            return len(self.text)
        span = self.encoding.token_to_chars(slot)
        return span[0] if span is not None else len(self.text)


@dataclass
class HaystackBuilder:
    """Builds the haystacks of a run, one group and length at a time.

    Args:
        corpus: Books to draw snippets from.
        needle_set: The *whole* needle set: every group's terms are banned from snippets
            and names are drawn from its list, whichever groups a run selects.
        tokenizer: The model's tokenizer.
        seed: Seed of every random choice.
        cache_dir: Where sentence token counts persist between runs (``None``: nowhere).
    """

    corpus: Corpus
    needle_set: NeedleSet
    tokenizer: Tokenizer
    seed: int
    cache_dir: Path | None = None
    _used: int = 0
    _rejected: int = 0
    _too_long: int = 0
    _hits: Counter[str] = field(default_factory=Counter, repr=False)

    def __post_init__(self) -> None:
        self._books = [book.sentences for book in self.corpus.books if book.sentences]
        if not self._books:
            raise HaystackError(
                f"corpus {self.corpus.name!r} has no sentences to build haystacks from",
                "point --niah-corpus at a folder of plain-text books",
            )
        self._counts = SentenceCounts(
            self._books,
            self.tokenizer,
            counts_file(self.cache_dir, self.tokenizer.identity, self.corpus.fingerprint()),
        )
        terms = sorted({t for g in self.needle_set.groups for t in g.audit_terms})
        self._leak = TermMatcher(terms) if terms else None

    # -- public -------------------------------------------------------------------------------

    def audit(self) -> AuditReport:
        """What the leak audit saw so far."""
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
                f"little for haystacks of {longest:,} tokens (it needs at least twice that)",
                "add books to the folder or lower the longest --niah-lengths value",
            )

    def blocks(
        self,
        selected: Sequence[NeedleGroup],
        lengths: Sequence[int],
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
    ) -> Iterator[Block]:
        """Every block of a run: shortest length first, groups in needle-set order.

        Selected groups get needle haystacks and controls; the other groups of the needle
        set get controls only (every question's negatives are the controls of all groups).
        """
        self.check_corpus_size(max(lengths))
        chosen = {g.id for g in selected}
        try:
            for length in lengths:
                for group in self.needle_set.groups:
                    yield self.block(
                        group,
                        length,
                        positions,
                        kinds,
                        orders,
                        controls,
                        needles=group.id in chosen,
                    )
        finally:
            self._counts.save()

    def block(
        self,
        group: NeedleGroup,
        length: int,
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
        *,
        needles: bool = True,
    ) -> Block:
        """The controls, and (with ``needles``) the needle haystacks, of one group at one length."""
        names = [self._name(group.id, length, p) for p in range(positions)]
        texts = {
            (kind, order, p): group.needle(kind, order, names[p])
            for kind in kinds
            for order in orders
            for p in range(positions)
        }
        lengths_of = dict(
            zip(
                texts,
                (len(e.ids) for e in self.tokenizer.encode_batch(list(texts.values()))),
                strict=True,
            )
        )
        longest = max(lengths_of.values())
        # A group that is not selected only gives controls: its needles need not fit (they
        # still size the filler stream, so its control is the one a full run draws).
        if needles and longest >= length:
            raise HaystackError(
                f"needle group {group.id!r}: a needle of {longest} tokens does not fit a "
                f"haystack of {length} tokens",
                f"shorten the needle or drop length {length} from --niah-lengths",
            )
        stream = self._stream(group.id, length, 0, length + longest)
        haystacks: list[Haystack] = []
        encodings: list[Encoded] = []
        for index in range(controls):
            source = stream if index == 0 else self._stream(group.id, length, index, length)
            cid = control_id(group.id, length, index)
            filler = self._fit(source, length, cid)
            haystacks.append(
                Haystack(
                    id=cid,
                    group_id=group.id,
                    length=length,
                    text=filler.text,
                    control_id=cid,
                    control=index,
                )
            )
            encodings.append(filler.encoding)
        if not needles:
            return Block(group.id, length, tuple(haystacks), tuple(encodings))
        own = control_id(group.id, length, 0)
        by_size: dict[int, list[tuple[str, str, int]]] = {}
        for key, n in lengths_of.items():
            by_size.setdefault(n, []).append(key)
        placed: dict[tuple[str, str, int], tuple[_Filler, Placement]] = {}
        placements = []
        for n, keys in sorted(by_size.items()):
            filler = self._fit(stream, length - n, f"{group.id} at {length} tokens")
            placement = place(filler.tokens, positions, filler.sentence_slots, filler.word_slots())
            placements.append((n, placement.between))
            for key in keys:
                placed[key] = (filler, placement)
        composed = {
            key: _compose(placed[key][0], placed[key][1].offsets[key[2]], texts[key])
            for key in texts
        }
        encoded = dict(
            zip(
                composed,
                self.tokenizer.encode_batch([t for t, _ in composed.values()]),
                strict=True,
            )
        )
        for (kind, order, position), needle in texts.items():
            key = (kind, order, position)
            filler, placement = placed[key]
            hid = case_id(group.id, kind, order, length, position)
            text, needle_char = composed[key]
            encoding, text, needle_char, offset = self._verified(
                hid,
                stream,
                length,
                needle,
                lengths_of[key],
                encoded[key],
                text,
                needle_char,
                placement.offsets[position],
                placement.between,
            )
            haystacks.append(
                Haystack(
                    id=hid,
                    group_id=group.id,
                    length=length,
                    text=text,
                    control_id=own,
                    kind=kind,
                    order=order,
                    position=position,
                    name=names[position],
                    needle=needle,
                    needle_offset=offset,
                    needle_tokens=lengths_of[key],
                    needle_char=needle_char,
                    duplicate_position=placement.duplicate_of[position],
                )
            )
            encodings.append(encoding)
        return Block(group.id, length, tuple(haystacks), tuple(encodings), tuple(placements))

    # -- pieces -------------------------------------------------------------------------------

    def _name(self, group_id: str, length: int, position: int) -> str:
        # One name per (group, length, position), shared by orders and arms so they pair up.
        rng = rng_for(self.seed, "name", group_id, length, position)
        return self.needle_set.names[int(rng.integers(len(self.needle_set.names)))]

    def _snippet(self, rng: np.random.Generator) -> tuple[list[str], list[int]] | None:
        """One run of consecutive sentences under the token budget, or None if rejected."""
        book = int(rng.integers(len(self._books)))
        sentences = self._books[book]
        start = int(rng.integers(len(sentences)))
        budget = int(rng.integers(MIN_SNIPPET_TOKENS, MAX_SNIPPET_TOKENS + 1))
        counts = self._counts.get(book, start, min(start + SNIPPET_SENTENCES, len(sentences)))
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
            hits = self._leak.find(" ".join(chosen))
            if hits:
                self._rejected += 1
                self._hits.update(hits)
                return None
        self._used += 1
        return chosen, chosen_counts

    def _stream(self, group_id: str, length: int, control: int, tokens: int) -> _Stream:
        rng = rng_for(self.seed, "stream", group_id, length, control)
        stream = _Stream([], [])
        total = misses = 0
        while total < tokens + 1:
            snippet = self._snippet(rng)
            if snippet is None:
                misses += 1
                if misses > MAX_CONSECUTIVE_REJECTS:
                    raise HaystackError(
                        f"corpus {self.corpus.name!r}: {misses} snippets in a row were rejected by "
                        "the leak audit or were too long; the books mention the needle groups' "
                        "key words too often (see the audit's term counts)",
                        "use other books, or needle groups with more distinctive keywords",
                    )
                continue
            misses = 0
            stream.sentences.extend(snippet[0])
            stream.counts.extend(snippet[1])
            total += sum(snippet[1])
        return stream

    def _fit(self, stream: _Stream, tokens: int, what: str) -> _Filler:
        """The stream's first ``tokens`` tokens, cut at a token end and verified."""
        parts = _prefix(stream, tokens + 8)
        text = " ".join(parts)
        for _ in range(_FIT_ATTEMPTS):
            (encoding,) = self.tokenizer.encode_batch([text])
            count = len(encoding.ids)
            if count == tokens:
                return _Filler(
                    text, encoding, tokens, _sentence_slots(parts, text, encoding, tokens)
                )
            if count < tokens:
                break
            span = encoding.token_to_chars(tokens - 1)
            if span is None:
                break
            text = text[: span[1]]
        raise HaystackError(
            f"{what}: could not cut the text to exactly {tokens} tokens with this tokenizer "
            "(its token count is not stable under truncation)",
            "report this model to pytest-niah",
        )

    def _verified(
        self,
        hid: str,
        stream: _Stream,
        length: int,
        needle: str,
        needle_tokens: int,
        encoding: Encoded,
        text: str,
        needle_char: int,
        offset: int,
        between: str,
    ) -> tuple[Encoded, str, int, int]:
        """The needle haystack, checked; a miss (joins merged or split tokens) is rebuilt."""
        filler_tokens = length - needle_tokens
        for _ in range(_FIT_ATTEMPTS):
            got = len(encoding.ids)
            if got == length:
                first = encoding.char_to_token(needle_char)
                last = encoding.char_to_token(needle_char + len(needle.rstrip()) - 1)
                if first is None or last is None or last - first + 1 != needle_tokens:
                    raise HaystackError(
                        f"{hid}: the needle is tokenized differently inside the haystack",
                        "report this model and needle to pytest-niah",
                    )
                return encoding, text, needle_char, first
            filler_tokens -= got - length
            filler = self._fit(stream, filler_tokens, hid)
            slots = filler.sentence_slots if between == "sentences" else filler.word_slots()
            slot = min(slots, key=lambda s: (abs(s - offset), s))
            text, needle_char = _compose(filler, slot, needle)
            (encoding,) = self.tokenizer.encode_batch([text])
        raise HaystackError(
            f"{hid}: could not reach exactly {length} tokens with the needle inserted",
            "report this model to pytest-niah",
        )


def _prefix(stream: _Stream, tokens: int) -> list[str]:
    """The fewest leading sentences holding at least ``tokens`` tokens."""
    total = 0
    for i, count in enumerate(stream.counts):
        total += count
        if total >= tokens:
            return stream.sentences[: i + 1]
    return list(stream.sentences)


def _sentence_slots(parts: list[str], text: str, encoding: Encoded, tokens: int) -> list[int]:
    """Token offsets where a sentence of ``parts`` starts in ``text`` (0 and the end too)."""
    slots = {0, tokens}
    char = 0
    for sentence in parts:
        if char >= len(text):
            break
        token = encoding.char_to_token(char)
        if token is not None:
            slots.add(token)
        char += len(sentence) + 1
    return sorted(s for s in slots if s <= tokens)


def _compose(filler: _Filler, slot: int, needle: str) -> tuple[str, int]:
    """The filler with the needle at token ``slot``, and the needle's character offset."""
    char = filler.char_of(slot)
    before = filler.text[:char].rstrip(" ")
    after = filler.text[char:].lstrip(" ")
    text = " ".join(part for part in (before, needle, after) if part)
    return text, len(before) + 1 if before else 0
