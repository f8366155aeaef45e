"""The one-hop word audit's rules: how a needle's words are read off its template."""

from __future__ import annotations

import pytest

from pytest_niah.haystacks.audit import _needle_words, _trim_punctuation


@pytest.mark.parametrize(
    ("chunk", "word"),
    [
        ("word.", "word"),
        ("(word),", "word"),
        ("«word»", "word"),
        ("don't", "don't"),  # inner marks stay
        ("...", ""),
        ("a.", "a"),
        ("word", "word"),
    ],
)
def test_punctuation_is_trimmed_from_both_ends_only(chunk, word):
    assert _trim_punctuation(chunk) == word


def test_a_needles_words_are_its_chunks_trimmed_once_each_in_order():
    template = "The {name} ate figs, then (more) figs... and \u200bdates."
    assert _needle_words(template) == [
        "The", "ate", "figs", "then", "more", "and", "\u200bdates",
    ]  # fmt: skip
