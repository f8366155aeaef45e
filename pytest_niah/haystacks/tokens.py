"""What the haystack builder needs from a tokenizer: batched encodings with character offsets.

Haystack lengths are counted in the model's own tokens (no special tokens). A tokenizer here
is anything whose ``encode_batch`` returns, per text, an object with the token ``ids``,
``char_to_token`` and ``token_to_chars``: exactly what a Hugging Face ``tokenizers.Encoding``
offers, so fast tokenizers are used as they are, batched and multi-threaded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable


@runtime_checkable
class Encoded(Protocol):
    """One text's tokens."""

    @property
    def ids(self) -> list[int]:
        """Token ids, no special tokens."""
        ...

    def __len__(self) -> int:
        """How many tokens (``len(ids)`` without building the list)."""
        ...

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Every token's character span ``[start, end)``."""
        ...

    def char_to_token(self, char_pos: int) -> int | None:
        """The token covering character ``char_pos`` (``None`` in white space)."""
        ...

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The character span ``[start, end)`` of token ``token_index``."""
        ...


@runtime_checkable
class Tokenizer(Protocol):
    """A tokenizer for building haystacks of exact token lengths."""

    @property
    def identity(self) -> str:
        """A hash that changes whenever any text's tokens could change."""
        ...

    def encode_batch(self, texts: Sequence[str]) -> Sequence[Encoded]:
        """Encode texts without special tokens, truncation or padding."""
        ...


@runtime_checkable
class CountingTokenizer(Tokenizer, Protocol):
    """A tokenizer that counts tokens faster than it encodes them (no character offsets)."""

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Each text's token count, as ``len(encode_batch(texts)[i].ids)``."""
        ...


def token_counts(tokenizer: Tokenizer, texts: Sequence[str]) -> list[int]:
    """Token counts of ``texts``, through the tokenizer's own counting where it has one."""
    if isinstance(tokenizer, CountingTokenizer):
        return tokenizer.count_batch(texts)
    return [len(encoding) for encoding in tokenizer.encode_batch(texts)]


class WordEncoding:
    """An :class:`Encoded` for :class:`WordTokenizer`: words and punctuation marks."""

    __slots__ = ("_spans", "ids")

    def __init__(self, ids: list[int], spans: list[tuple[int, int]]) -> None:
        self.ids = ids
        self._spans = spans

    def __len__(self) -> int:
        """How many tokens."""
        return len(self.ids)

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Every token's span."""
        return self._spans

    def char_to_token(self, char_pos: int) -> int | None:
        """The token covering ``char_pos``, by bisection."""
        from bisect import bisect_right

        index = bisect_right(self._spans, (char_pos, 1 << 62)) - 1
        if index >= 0 and self._spans[index][0] <= char_pos < self._spans[index][1]:
            return index
        return None

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The span of a token."""
        return self._spans[token_index]


class WordTokenizer:
    """Words and single punctuation marks, the tokens of the lexical baseline.

    Ids are stable hashes of the lower-cased token, so equal words get equal ids.
    """

    PATTERN = re.compile(r"\w+|[^\w\s]")
    identity = "word-regex-v1"

    def encode_batch(self, texts: Sequence[str]) -> list[WordEncoding]:
        """Encode each text."""
        out = []
        for text in texts:
            matches = list(self.PATTERN.finditer(text))
            ids = [_word_id(m.group(0)) for m in matches]
            out.append(WordEncoding(ids, [m.span() for m in matches]))
        return out


@lru_cache(maxsize=1 << 16)
def _word_id(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.lower().encode(), digest_size=4).digest(), "little")
