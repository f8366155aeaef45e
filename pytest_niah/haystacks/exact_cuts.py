"""Exact cuts: a stream's first N tokens, and a composed needle haystack of exactly L tokens.

:class:`~pytest_niah.haystacks.builder.HaystackBuilder` cuts every filler and checks every
composed haystack here. A cut ends at a token's end and is tokenized again to check it; a
composed haystack whose joins merged or split tokens is rebuilt with a filler resized by the
difference. Byte-level tokenizers split rare characters across tokens, and no cut ends
between those: such a character is left out of the filler, and a needle whose count keeps
swinging around the length moves to the next nearest gap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.fillers import (
    Filler,
    Stream,
    compose,
    leading_sentences,
    sentence_slots,
)
from pytest_niah.haystacks.tokens import Encoded, Tokenizer

FIT_ATTEMPTS = 6
# Characters split across tokens a cut may drop (each shortens the text, so this ends).
SPLIT_CHARACTERS = 32
# Characters a cut may grow by where a word's prefix has fewer tokens alone than inside it.
GROW_CHARACTERS = 48


@dataclass(frozen=True)
class ExactCuts:
    """Cuts and checks in one tokenizer's tokens."""

    tokenizer: Tokenizer
    # The tokens of a stream's first sentences joined, from each sentence's own (see
    # SnippetDrawer.joined); None, or a None answer: tokenize the joined text.
    joined: Callable[[Stream, int], Encoded | None] | None = None

    def cut(self, stream: Stream, tokens: int, what: str) -> Filler:
        """As :meth:`fit` with at most one tokenizer call: the cut is not tokenized again.

        Its caller checks it.
        """
        parts = leading_sentences(stream, tokens + 8)
        text = " ".join(parts)
        encoding = None if self.joined is None else self.joined(stream, len(parts))
        if encoding is None:
            (encoding,) = self.tokenizer.encode_batch([text])
        count = len(encoding)
        if count < tokens:
            return self.fit(stream, tokens, what)  # it raises the error that explains
        whole = Filler(text, encoding, count, parts, sentence_slots(parts, text, encoding, count))
        return whole if count == tokens else whole.prefix(tokens)

    def fit(self, stream: Stream, tokens: int, what: str) -> Filler:
        """The stream's first ``tokens`` tokens, cut at a token end and verified.

        Where token ``tokens`` ends inside a character split across tokens, that character
        is dropped and the text cut again. Where the cut word's prefix tokenizes into fewer
        tokens than it had inside the word (a unigram model segments it anew), the cut
        grows a character at a time; a character that takes the count past ``tokens`` is
        left out.
        """
        budget = tokens + 8
        parts = leading_sentences(stream, budget)
        source = text = " ".join(parts)
        tried: set[int] = set()
        for _ in range(FIT_ATTEMPTS + SPLIT_CHARACTERS + GROW_CHARACTERS):
            (encoding,) = self.tokenizer.encode_batch([text])
            count = len(encoding)
            if count == tokens:
                return Filler(
                    text, encoding, tokens, parts, sentence_slots(parts, text, encoding, tokens)
                )
            tried.add(len(text))
            if count < tokens and len(text) >= len(source):
                # Sentences joined have fewer tokens than alone (a word marker prepended to
                # each text's first word only): draw more of the stream.
                budget += tokens - count + 8
                more = leading_sentences(stream, budget)
                if len(more) == len(parts):
                    # The sentences counted alone already hold the larger budget: take the
                    # next one, whatever its count.
                    more = list(stream.sentences[: len(parts) + 1])
                if len(more) == len(parts):
                    break  # the stream holds no more
                parts, tried = more, set()
                source = text = " ".join(parts)
                continue
            if count < tokens:
                text = source[: len(text) + 1]
                continue
            span = encoding.token_to_chars(tokens - 1)
            if span is None:
                break
            following = encoding.token_to_chars(tokens)
            if following is not None and following[0] < span[1]:
                # The cut falls inside a character split across tokens (a byte-level BPE's
                # rare letter): no prefix ends there, so that one character is left out.
                text = text[: span[0]] + text[span[1] :]
                source = source[: span[0]] + source[span[1] :]
                continue
            if span[1] in tried:  # growing by the last character overshot: leave it out
                source = source[: len(text) - 1] + source[len(text) :]
                text = source[: len(text) - 1]
                continue
            text = text[: span[1]]
        raise HaystackError(
            f"{what}: could not cut the text to exactly {tokens} tokens with this tokenizer "
            "(its token count is not stable under truncation)",
            "report this model to pytest-niah",
        )

    def verified(
        self,
        hid: str,
        *,
        stream: Stream,
        length: int,
        needle: str,
        needle_tokens: int,
        encoding: Encoded,
        text: str,
        needle_char: int,
        offset: int,
        between: str,
        refits: dict[int, Filler] | None = None,
    ) -> tuple[Encoded, str, int, int, int]:
        """The needle haystack, checked; a miss (joins merged or split tokens) is rebuilt.

        Where the count swings around the length whichever way the filler is cut (a
        byte-level tokenizer's rare characters next to the needle), the needle moves to the
        next nearest gap. The needle's tokens are read off the final tokens' character
        offsets (:func:`needle_span`): inside a haystack a needle may tokenize otherwise than
        alone (a byte-level BPE reads a word after a space as another token), so its offset
        and its count there are returned.

        ``refits``: the stream's fillers already fitted, by size, kept across the calls for
        one stream (a block's needles of one size miss alike and share the refit filler).
        """
        refits = {} if refits is None else refits
        filler_tokens = length - needle_tokens
        sizes: set[int] = set()
        avoid: set[int] = set()
        slot, end = offset, filler_tokens
        for _ in range(FIT_ATTEMPTS * 3):
            got = len(encoding)
            if got == length:
                first, count = needle_span(encoding, needle_char, needle, hid)
                return encoding, text, needle_char, first, count
            sizes.add(filler_tokens)
            filler_tokens -= got - length
            if filler_tokens in sizes:  # swinging: another gap
                # The end moves with the filler's size (a cut that ends in a lone word marker).
                avoid.add(-1 if slot == end else slot)
                filler_tokens = length - needle_tokens
                sizes.clear()
            if filler_tokens not in refits:
                refits[filler_tokens] = self.fit(stream, filler_tokens, hid)
            filler = refits[filler_tokens]
            slots = filler.sentence_slots if between == "sentences" else filler.word_slots()
            end = filler.tokens
            if -1 in avoid:
                avoid.add(end)
            slot = min(
                [s for s in slots if s not in avoid] or slots, key=lambda s: (abs(s - offset), s)
            )
            text, needle_char = compose(filler, slot, needle)
            (encoding,) = self.tokenizer.encode_batch([text])
        raise HaystackError(
            f"{hid}: could not reach exactly {length} tokens with the needle inserted",
            "report this model to pytest-niah",
        )


def needle_span(encoding: Encoded, needle_char: int, needle: str, hid: str) -> tuple[int, int]:
    """The first token and the number of tokens that cover the needle's characters.

    Tokens overlapping ``[needle_char, needle_char + len(needle))`` (its trailing white space
    aside), from the encoding's offsets (by bisection: they never decrease): a token that
    reaches over the needle's edge (a byte-level token with the space before the needle)
    counts as the needle's.
    """
    end = needle_char + len(needle.rstrip())
    first = _first_token(encoding, lambda span: span[1] > needle_char)
    last = _first_token(encoding, lambda span: span[0] >= end) - 1
    if last < first:
        raise HaystackError(
            f"{hid}: the needle {needle!r} has no tokens of its own in the haystack "
            "(the tokenizer reads its text as nothing)",
            "give the needle words the model's tokenizer reads, in the needle set",
        )
    return first, last - first + 1


def _first_token(encoding: Encoded, past: Callable[[tuple[int, int]], bool]) -> int:
    """The first token whose span is ``past`` (``len(encoding)`` if none), by bisection."""
    low, high = 0, len(encoding)
    while low < high:
        middle = (low + high) // 2
        span = encoding.token_to_chars(middle)
        if span is not None and past(span):
            high = middle
        else:
            low = middle + 1
    return low
