"""The sentence token cache's rules: what a stored file must hold to be read, on the word
tokenizer (a token per word or mark)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.haystacks.sentence_tokens import SentenceTokens, _plausible

BOOKS = [["one two.", "three four five."]]


def _stored(counts, tokens=None, dtype=np.int32):
    """Counts, and as many ids, starts and ends as they add up to (or ``tokens``)."""
    counts = np.asarray(counts, dtype=dtype)
    total = int(counts[counts != -1].sum()) if tokens is None else tokens
    return (counts, *(np.zeros(total, dtype=np.int32) for _ in range(3)))


@pytest.mark.parametrize(
    ("stored", "plausible"),
    [
        (_stored([3, 4]), True),
        (_stored([-1, 4]), True),  # -1: a sentence not encoded yet
        (_stored([], tokens=0), True),  # a book without sentences
        (_stored([3]), False),  # another book's
        (_stored([3.0, 4.0], dtype=np.float64), False),  # not whole numbers
        (_stored([-2, 4]), False),  # below "unknown"
        (_stored([3, 4], tokens=6), False),  # fewer ids than counted
        (_stored([3, 4], tokens=8), False),  # more ids than counted
    ],
)
def test_stored_tokens_are_read_only_where_they_fit_the_counts(stored, plausible):
    fresh = np.zeros(2 if stored[0].size else 0, dtype=np.int32)  # this corpus's book
    assert _plausible(stored, fresh) is plausible


def test_a_file_that_does_not_fit_the_books_is_encoded_again(tmp_path, word_tokenizer):
    """A readable file of the right format whose counts are another corpus's: nothing of it
    is used, and the sentences are encoded from their text."""
    path = tmp_path / "tokens.npz"
    counts, ids, starts, ends = _stored([3, 4, 5])  # three sentences; the book has two
    np.savez(path, format=np.array(1), counts_0=counts, ids_0=ids, starts_0=starts, ends_0=ends)
    store = SentenceTokens(BOOKS, word_tokenizer, path)
    assert store.get(0, 0, 2) == [3, 4]
    joined = store.joined([(0, 0), (0, 1)], BOOKS[0])
    assert joined.ids == word_tokenizer.encode_batch([" ".join(BOOKS[0])])[0].ids
