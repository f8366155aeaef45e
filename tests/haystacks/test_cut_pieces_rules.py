"""Cut pieces: a filler's last piece read alone, a cut encoding's characters, a needle's slot
(on the word tokenizer and a byte-level BPE, or on crafted spans)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.haystacks.fillers import Filler, PrefixEncoding
from pytest_niah.haystacks.placement import Placement
from pytest_niah.haystacks.splice import SplicedEncoding, first_word, spliced, tails_match


def _filler(text, encoding):
    return Filler(text, encoding, len(encoding), [text], [0, len(encoding)])


def test_a_filler_whose_last_piece_reads_otherwise_alone_is_not_spliced(word_tokenizer):
    """Its tokens were those of another text (same spans, another last word): the piece
    tokenized alone disagrees, so the block is built from text."""
    text = "one two three"
    (own,) = word_tokenizer.encode_batch([text])
    (other,) = word_tokenizer.encode_batch(["one two thrxx"])
    assert own.offsets == other.offsets and own.ids != other.ids
    assert tails_match(word_tokenizer, [_filler(text, own)])
    assert not tails_match(word_tokenizer, [_filler(text, own), _filler(text, other)])


def test_a_cut_encoding_reads_its_characters_and_no_further(word_tokenizer):
    (whole,) = word_tokenizer.encode_batch(["one two three four"])
    cut = PrefixEncoding(whole, 2, len("one two"))
    assert [cut.char_to_token(c) for c in (0, 2, 4, 6)] == [0, 0, 1, 1]
    assert cut.char_to_token(3) is None  # the space between
    assert cut.char_to_token(8) is None and cut.char_to_token(-1) is None  # past the cut


def test_fillers_with_no_cut_piece_need_no_check(word_tokenizer):
    """No filler, or only fillers that end in white space: nothing was cut, the ids stand."""
    (spaced,) = word_tokenizer.encode_batch(["one two "])
    assert tails_match(word_tokenizer, [])
    assert tails_match(word_tokenizer, [_filler("one two ", spaced)])


@pytest.mark.parametrize("text", ["one two\nthree", " three", "one three"])
def test_the_last_piece_is_read_with_the_space_before_it_and_nothing_else(gpt2_tokenizer, text):
    """A space before the last piece goes with it, even the text's first character: a
    byte-level BPE reads a word after a space as another token, but after a line break as
    the word alone."""
    (own,) = gpt2_tokenizer.encode_batch([text])
    assert tails_match(gpt2_tokenizer, [_filler(text, own)])


def _spliced_at(slot: int, starts: list[int], ends: list[int], head=None):
    """:func:`spliced` of one needle ("X", one token) at token ``slot`` of a three-token filler
    "brook ran" whose spans are ``starts`` and ``ends``."""
    text = "brook ran"
    encoding = SplicedEncoding(np.array([5, 6, 7]), np.array(starts), np.array(ends))
    filler = Filler(text, encoding, 3, [text], [0, 3])
    key = ("g", "default", 0)
    needle = (np.array([9]), np.array([0]), np.array([1]))
    char = filler.char_of(slot)
    composed = {key: (text[:char] + "X " + text[char:], char)}
    placed = {key: (filler, Placement((slot,), "words", (None,)))}
    heads = {} if head is None else {id(filler): head}
    return spliced(composed, placed, {key: (needle, needle)}, {key: "X"}, heads)


@pytest.mark.parametrize("slot", [1, 2])
def test_a_slot_inside_a_token_that_reaches_into_the_next_is_built_from_text(slot):
    """A lone word marker "▁" spans its word's first character: no split of the ids there
    matches the split of the text, at the first slot after it as at any other."""
    assert _spliced_at(slot, [0, 0, 6], [0, 5, 9]) is not None
    overlapping = ([0, 0, 6], [1, 5, 9]) if slot == 1 else ([0, 6, 6], [5, 7, 9])
    assert _spliced_at(slot, *overlapping) is None


def test_a_needle_put_first_is_spliced_whatever_the_last_token_spans():
    """Slot 0 has no token before it: the check never wraps round to the filler's last."""
    result = _spliced_at(0, [0, 0, 6], [0, 5, 9])
    assert result is not None and result[0] is not None
    assert result[0].ids == [9, 5, 6, 7]


def test_a_needle_put_first_takes_the_first_words_tokens_after_a_space():
    """Behind a needle put first, the filler's first word follows a space: its tokens are
    the head given for it ("brook" read as one token after a space), the rest the filler's."""
    head = (np.array([8]), np.array([0]), np.array([5]))
    (result,) = _spliced_at(0, [0, 0, 6], [0, 5, 9], head=head)
    assert result is not None and result.ids == [9, 8, 7]
    assert result.offsets == [(0, 1), (2, 7), (8, 11)]
    (later,) = _spliced_at(1, [0, 0, 6], [0, 5, 9], head=head)
    assert later.ids == [5, 9, 6, 7]  # a needle after the first word leaves it as it is


@pytest.mark.parametrize(
    ("text", "word"), [("brook ran on", "brook"), ("brook", "brook"), (" brook ran", "")]
)
def test_a_fillers_first_word_ends_at_its_first_space(text, word):
    # Found (fresh mutation draw 1863714026, splice.py:86 `0 -> 1`): a text starting with
    # a space has an empty first word, not the whole text.
    assert first_word(text) == word
