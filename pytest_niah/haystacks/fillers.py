"""Fillers: a stream of book sentences cut to an exact token count, and where a needle goes.

A :class:`Stream` is the seeded run of sentences drawn for one group and length; a
:class:`Filler` is its first N tokens with the token offsets of its sentence and word gaps;
:func:`compose` puts a needle into one of those gaps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from pytest_niah.haystacks.tokens import Encoded

_SPACE = re.compile(r"\s")


@dataclass
class Stream:
    """Sentences drawn for one group and length, with their token counts (same order).

    ``refs``: each sentence's (book, index) in the corpus, where known.
    """

    sentences: list[str]
    counts: list[int]
    refs: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Filler:
    """A filler cut to an exact token count, and the gaps a needle can go into."""

    text: str
    encoding: Encoded
    tokens: int
    parts: list[str]  # the stream's sentences it was cut from (the last one maybe cut)
    sentence_slots: list[int]
    _word_slots: list[int] | None = None

    def prefix(self, tokens: int) -> Filler:
        """Its first ``tokens`` tokens, from its own encoding: no tokenizer call.

        For a tokenizer whose tokens before a cut do not depend on the text after it (as
        :meth:`HaystackBuilder._fit` already assumes), this is the text ``_fit`` would cut
        from the same stream; the composed haystacks are tokenized and checked anyway.
        """
        span = self.encoding.token_to_chars(tokens - 1) if tokens > 0 else (0, 0)
        end = span[1] if span is not None else len(self.text)
        text = self.text[:end]
        base = self.encoding
        if isinstance(base, PrefixEncoding):  # a prefix of a prefix: cut the original
            base = base.base
        encoding = PrefixEncoding(base, tokens, end)
        slots = sentence_slots(self.parts, text, encoding, tokens)
        return Filler(text, encoding, tokens, self.parts, slots)

    def word_slots(self) -> list[int]:
        """Token offsets where a word starts (a token after white space), 0 and the end."""
        if self._word_slots is None:
            space = np.zeros(len(self.text) + 1, dtype=bool)
            space[[m.start() for m in _SPACE.finditer(self.text)]] = True
            starts = np.fromiter(
                (start for start, _ in self.encoding.offsets[1 : self.tokens]), dtype=np.int64
            )
            after_space = (starts > 0) & space[starts - 1]
            slots = {0, self.tokens, *(np.flatnonzero(after_space) + 1).tolist()}
            self._word_slots = sorted(slots)
        return self._word_slots

    def char_of(self, slot: int) -> int:
        """Where in the text a needle at token ``slot`` goes."""
        if slot >= self.tokens:
            return len(self.text)
        span = self.encoding.token_to_chars(slot)
        return span[0] if span is not None else len(self.text)


class PrefixEncoding:
    """The first tokens of an :class:`Encoded`, as an :class:`Encoded` of the cut text."""

    __slots__ = ("_chars", "_tokens", "base")

    def __init__(self, base: Encoded, tokens: int, chars: int) -> None:
        self.base, self._tokens, self._chars = base, tokens, chars

    def __len__(self) -> int:
        return self._tokens

    @property
    def ids(self) -> list[int]:
        """The first tokens' ids."""
        return list(self.base.ids[: self._tokens])

    @property
    def id_array(self) -> np.ndarray | None:
        """The first tokens' ids as an array, where the full encoding holds one."""
        ids = getattr(self.base, "id_array", None)
        return None if ids is None else ids[: self._tokens]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """The first tokens' character spans."""
        return list(self.base.offsets[: self._tokens])

    def char_to_token(self, char_pos: int) -> int | None:
        """The token covering ``char_pos`` within the cut text."""
        if not 0 <= char_pos < self._chars:
            return None
        token = self.base.char_to_token(char_pos)
        return token if token is not None and token < self._tokens else None

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The span of one of the first tokens."""
        if not 0 <= token_index < self._tokens:
            return None
        return self.base.token_to_chars(token_index)


def leading_sentences(stream: Stream, tokens: int) -> list[str]:
    """The fewest leading sentences holding at least ``tokens`` tokens."""
    total = 0
    for i, count in enumerate(stream.counts):
        total += count
        if total >= tokens:
            return stream.sentences[: i + 1]
    return list(stream.sentences)


def sentence_slots(parts: list[str], text: str, encoding: Encoded, tokens: int) -> list[int]:
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


def compose(filler: Filler, slot: int, needle: str) -> tuple[str, int]:
    """The filler with the needle at token ``slot``, and the needle's character offset."""
    char = filler.char_of(slot)
    before = filler.text[:char].rstrip(" ")
    after = filler.text[char:].lstrip(" ")
    text = " ".join(part for part in (before, needle, after) if part)
    return text, len(before) + 1 if before else 0
