"""Fillers' rules on the word tokenizer (a token per word or mark, counts plain to see):
leading sentences, sentence slots, and a cut encoding."""

from __future__ import annotations

import pytest

from pytest_niah.haystacks.fillers import PrefixEncoding, Stream, leading_sentences, sentence_slots

SENTENCES = ["one two.", "three four.", "five six."]  # 3 tokens each


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(1, 1), (3, 1), (4, 2), (6, 2), (7, 3), (9, 3), (10, 3), (1000, 3)],
)
def test_leading_sentences_are_the_fewest_that_hold_the_tokens(tokens, expected):
    """Exactly enough counts (>=, not >); more than the stream holds: all of it."""
    stream = Stream(SENTENCES, counts=[3, 3, 3])
    assert leading_sentences(stream, tokens) == SENTENCES[:expected]


def test_sentence_slots_are_where_each_sentence_starts(word_tokenizer):
    text = " ".join(SENTENCES)
    (encoding,) = word_tokenizer.encode_batch([text])
    assert sentence_slots(SENTENCES, text, encoding, 9) == [0, 3, 6, 9]


def test_sentence_slots_step_over_exactly_one_joining_space(word_tokenizer):
    """Sentences one word and a mark each: a start off by one character lands on the mark
    before it, so every slot after the first depends on the single space between them."""
    # Found (mutation seed 1016273348, fillers.py:142): a step of two characters a sentence
    # still found the starts of sentences of longer words.
    sentences = ["a.", "b.", "c.", "d."]
    text = " ".join(sentences)
    (encoding,) = word_tokenizer.encode_batch([text])
    assert sentence_slots(sentences, text, encoding, 8) == [0, 2, 4, 6, 8]


def test_sentence_slots_stop_at_the_end_of_a_cut_text(word_tokenizer):
    """A text cut inside the second sentence: its start is a slot, the third's is not."""
    text = "one two. three"
    (encoding,) = word_tokenizer.encode_batch([text])
    assert sentence_slots(SENTENCES, text, encoding, 4) == [0, 3, 4]


def test_a_sentence_past_a_cut_encoding_is_no_slot(word_tokenizer):
    """The third sentence lies in the text but past the encoding's cut: no token, no slot."""
    text = " ".join(SENTENCES)
    (whole,) = word_tokenizer.encode_batch([text])
    cut = PrefixEncoding(whole, 4, len("one two. three"))
    assert sentence_slots(SENTENCES, text, cut, 4) == [0, 3, 4]


def test_a_cut_encoding_is_its_first_tokens(word_tokenizer):
    (whole,) = word_tokenizer.encode_batch([" ".join(SENTENCES)])
    cut = PrefixEncoding(whole, 4, len("one two. three"))
    assert len(cut) == 4
    assert cut.ids == whole.ids[:4]
    assert cut.offsets == whole.offsets[:4]
    assert cut.token_to_chars(3) == (9, 14)
    assert cut.token_to_chars(4) is None and cut.token_to_chars(-1) is None


def test_a_cut_encoding_never_answers_a_token_past_its_cut(word_tokenizer):
    """Even where its character bound reaches further (a cut whose last span is unknown
    keeps the whole text): "three" is token 2, past a two-token cut."""
    text = "one two three four"
    (whole,) = word_tokenizer.encode_batch([text])
    cut = PrefixEncoding(whole, 2, len(text))
    assert cut.char_to_token(4) == 1
    assert cut.char_to_token(text.index("three")) is None
