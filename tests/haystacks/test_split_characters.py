"""Haystacks in a byte-level tokenizer that splits rare characters across tokens.

A byte-level BPE (cl100k_base's kind) gives a character it never merged one token per
UTF-8 byte; those tokens share the character's span, so no prefix of the text ends between
them. A cut that falls there drops that one character and cuts again, instead of failing.
A needle next to such characters can make the count swing around the length whichever way
the filler is cut; the needle then moves to the next gap. Found: the builder gave up ("could
not cut the text to exactly N tokens", "could not reach exactly N tokens with the needle
inserted").
"""

from __future__ import annotations

import itertools

import pytest

from pytest_niah.embed.tiktoken_tokenizer import FILE_PATTERN, TiktokenTokenizer
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.inputs.corpus import Book, Corpus
from pytest_niah.inputs.needles import builtin_needle_set

tiktoken = pytest.importorskip("tiktoken")

GROUPS = builtin_needle_set().select(["dietary-01"])
# Words whose letters the encoding below never merges: every non-ASCII one is 2-4 tokens.
WORDS = [
    "café",
    "naïve",
    "Ἀθῆναι",
    "Ωμέγα",
    "שָׁלוֹם",
    "€100",
    "smörgåsbord",
    "façade",
    "🍑",
    "jalapeño",
]


def sentences(count: int) -> str:
    out = []
    for i in range(count):
        picked = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + i % 5))
        out.append(f"The traveller number {i} wrote {picked} on the wall.")
    return " ".join(out)


@pytest.fixture(scope="module")
def byte_tokenizer() -> TiktokenTokenizer:
    ranks = {bytes([b]): b for b in range(256)}
    for pair in ("th", "he", "in", "er", "an", " t", " w", "on", "re", "at"):
        ranks[pair.encode()] = len(ranks)
    encoding = tiktoken.Encoding(
        name="niah-bytes", pat_str=FILE_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    return TiktokenTokenizer(encoding)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    book = Book(name="accents", text=sentences(3000), source="-", sha256="0")
    return Corpus(name="accents", books=(book,))


def test_the_encoding_splits_characters(byte_tokenizer):
    (encoded,) = byte_tokenizer.encode_batch(["Ἀθῆναι"])
    spans = encoded.offsets
    assert len(spans) > len("Ἀθῆναι")
    assert any(a == b for a, b in itertools.pairwise(spans))


@pytest.mark.parametrize("seed", range(6))
def test_every_haystack_holds_exactly_its_length_across_split_characters(
    corpus, byte_tokenizer, seed
):
    builder = HaystackBuilder(corpus, GROUPS, byte_tokenizer, seed)
    lengths = tuple(range(61, 141, 8))
    blocks = list(builder.blocks(GROUPS.groups, lengths, 5, ("onehop",), ("default",), 2))
    haystacks = [h for block in blocks for h in block.haystacks]
    assert len(haystacks) == len(lengths) * (5 + 2)
    encoding = byte_tokenizer.encoding
    for h in haystacks:
        assert len(encoding.encode_ordinary(h.text)) == h.length, h.id
        if not h.is_control:
            assert h.text[h.needle_char : h.needle_char + len(h.needle)] == h.needle
            (encoded,) = byte_tokenizer.encode_batch([h.text])
            assert encoded.char_to_token(h.needle_char) == h.needle_offset, h.id
