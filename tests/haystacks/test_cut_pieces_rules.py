"""Cut pieces: a filler's last piece read alone, a cut encoding's characters, a snippet's
budget (on the word tokenizer, whose counts are plain to see)."""

from __future__ import annotations

import numpy as np

from pytest_niah.haystacks.fillers import Filler, PrefixEncoding
from pytest_niah.haystacks.snippet_streams import MAX_SNIPPET_TOKENS, SnippetDrawer
from pytest_niah.haystacks.splice import tails_match


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


def test_every_snippet_stays_within_its_token_budget(shared_corpus, word_tokenizer):
    from pytest_niah.inputs.needles import builtin_needle_set

    drawer = SnippetDrawer(shared_corpus, builtin_needle_set(), word_tokenizer, 42)
    rng = np.random.default_rng(3)
    drawn = [s for s in (drawer._snippet(rng) for _ in range(40)) if s is not None]
    assert len(drawn) >= 20
    assert all(0 < sum(counts) <= MAX_SNIPPET_TOKENS for _, counts, _ in drawn)
