from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.haystacks.chunking import chunk_bounds, chunk_texts
from pytest_niah.inputs.text import sentence_starts, split_sentences


def word_spans(text: str) -> list[tuple[int, int]]:
    """A toy tokenizer: words and punctuation marks are tokens."""
    return [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]


SENTENCE = st.lists(
    st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=1, max_size=12
).map(lambda words: " ".join(words).capitalize() + ".")


def test_sentence_starts_follow_split_sentences():
    text = "Mr. Brown came home. He sat down! Was it late? No. 5 was open. The end"
    starts = sentence_starts(text)
    pieces = [text[a:b].strip() for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    assert pieces == list(split_sentences(text))
    assert starts[0] == 0 and "Mr. Brown came home." in pieces


def test_whole_sentences_are_packed_up_to_the_chunk_size():
    text = "One two three. Four five six. Seven eight nine. Ten."
    spans = word_spans(text)  # sentences of 4, 4, 4 and 2 tokens
    assert chunk_bounds(text, spans, 8) == [(0, 8), (8, 14)]
    assert chunk_texts(text, spans, 8) == [
        "One two three. Four five six.",
        "Seven eight nine. Ten.",
    ]
    # 6 tokens: no two 4-token sentences fit together.
    assert chunk_bounds(text, spans, 6) == [(0, 4), (4, 8), (8, 14)]


def test_a_sentence_longer_than_a_chunk_is_cut():
    text = "Short one. " + " ".join(["Word"] + ["word"] * 9) + ". Tail here."
    spans = word_spans(text)  # 3, 11, 3 tokens
    assert chunk_bounds(text, spans, 4) == [(0, 3), (3, 7), (7, 11), (11, 14), (14, 17)]


def test_a_sentence_with_no_tokens_after_a_cut_one_makes_no_empty_chunk():
    """The last sentence starts past the last token (its characters read as nothing, or the
    tokens stop before it): after a cut sentence, no chunk of zero tokens follows."""
    # Found (mutation seed 1016273348, chunking.py:38): a sentence start at the end of the
    # tokens was kept and closed an empty chunk.
    text = "One two three four five. Six."
    spans = word_spans(text)[:6]  # "Six." has no tokens
    assert chunk_bounds(text, spans, 4) == [(0, 4), (4, 6)]
    assert chunk_texts(text, spans, 4) == ["One two three four", "five."]


def test_a_needle_sentence_is_never_cut():
    filler = " ".join(["Then the ship sailed on and on."] * 30)
    needle = "Actually, Yuki lives next to the Semper Opera House."
    text = f"{filler} {needle} {filler}"
    spans = word_spans(text)
    for tokens in (12, 16, 40, 64):
        chunks = chunk_texts(text, spans, tokens)
        assert sum(needle in c for c in chunks) == 1, tokens


@given(st.lists(SENTENCE, min_size=1, max_size=30), st.integers(1, 40))
def test_chunks_cover_every_token_once_in_order(sentences, tokens):
    text = " ".join(sentences)
    spans = word_spans(text)
    bounds = chunk_bounds(text, spans, tokens)
    assert [a for a, _ in bounds] == [0, *[b for _, b in bounds[:-1]]]
    assert bounds[-1][1] == len(spans)
    assert all(0 < b - a <= tokens for a, b in bounds)
    # Every chunk starts a sentence, unless it continues one longer than a chunk.
    firsts = {next(i for i, (s, _) in enumerate(spans) if s >= c) for c in sentence_starts(text)}
    for (start, _), (prev_start, prev_stop) in zip(bounds[1:], bounds, strict=False):
        assert start in firsts or prev_stop - prev_start == tokens


def test_bad_chunk_size():
    with pytest.raises(ValueError, match="at least 1"):
        chunk_bounds("A b.", [(0, 1)], 0)
    assert chunk_bounds("", [], 5) == []
