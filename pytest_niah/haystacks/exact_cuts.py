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
        is dropped and the text cut again.
        """
        parts = leading_sentences(stream, tokens + 8)
        text = " ".join(parts)
        for _ in range(FIT_ATTEMPTS + SPLIT_CHARACTERS):
            (encoding,) = self.tokenizer.encode_batch([text])
            count = len(encoding)
            if count == tokens:
                return Filler(
                    text, encoding, tokens, parts, sentence_slots(parts, text, encoding, tokens)
                )
            if count < tokens:
                break
            span = encoding.token_to_chars(tokens - 1)
            if span is None:
                break
            following = encoding.token_to_chars(tokens)
            if following is not None and following[0] < span[1]:
                # The cut falls inside a character split across tokens (a byte-level BPE's
                # rare letter): no prefix ends there, so that one character is left out.
                text = text[: span[0]] + text[span[1] :]
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
    ) -> tuple[Encoded, str, int, int]:
        """The needle haystack, checked; a miss (joins merged or split tokens) is rebuilt.

        Where the count swings around the length whichever way the filler is cut (a
        byte-level tokenizer's rare characters next to the needle), the needle moves to the
        next nearest gap; its offset is read off the final tokens, as always.
        """
        filler_tokens = length - needle_tokens
        sizes: set[int] = set()
        avoid: set[int] = set()
        slot = offset
        for _ in range(FIT_ATTEMPTS * 3):
            got = len(encoding)
            if got == length:
                first = encoding.char_to_token(needle_char)
                last = encoding.char_to_token(needle_char + len(needle.rstrip()) - 1)
                if first is None or last is None or last - first + 1 != needle_tokens:
                    raise HaystackError(
                        f"{hid}: the needle is tokenized differently inside the haystack",
                        "report this model and needle to pytest-niah",
                    )
                return encoding, text, needle_char, first
            sizes.add(filler_tokens)
            filler_tokens -= got - length
            if filler_tokens in sizes:  # swinging: another gap
                avoid.add(slot)
                filler_tokens = length - needle_tokens
                sizes.clear()
            filler = self.fit(stream, filler_tokens, hid)
            slots = filler.sentence_slots if between == "sentences" else filler.word_slots()
            slot = min(
                [s for s in slots if s not in avoid] or slots, key=lambda s: (abs(s - offset), s)
            )
            text, needle_char = compose(filler, slot, needle)
            (encoding,) = self.tokenizer.encode_batch([text])
        raise HaystackError(
            f"{hid}: could not reach exactly {length} tokens with the needle inserted",
            "report this model to pytest-niah",
        )
