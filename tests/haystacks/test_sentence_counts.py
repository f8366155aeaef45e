"""Counting drawn sentences: one call per length ahead of its blocks, few small calls after.

A small tokenizer call waits behind any large one in the tokenizer library's thread pool,
so the builder counts the sentences a length's streams will most likely read in one call
(SnippetDrawer.prefetch) and counts a few leftovers one by one (HaystackTokenizer.count_batch).
Neither may change a count, so neither changes a haystack.
"""

from __future__ import annotations

import time

import pytest

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.sentence_counts import SentenceCounts
from pytest_niah.haystacks.snippet_streams import SnippetDrawer
from pytest_niah.inputs.needles import builtin_needle_set

GROUPS = builtin_needle_set().select(["dietary-01", "location-02"])


class Recording:
    """A tokenizer that records the size of every counting call."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.calls: list[int] = []

    def encode_batch(self, texts):
        return self.inner.encode_batch(texts)

    def count_batch(self, texts):
        self.calls.append(len(texts))
        return self.inner.count_batch(texts)


def test_fill_counts_only_the_missing_sentences_in_one_call(shared_corpus, minilm_tokenizer):
    books = [book.sentences for book in shared_corpus.books]
    tokenizer = Recording(minilm_tokenizer)
    counts = SentenceCounts(books, tokenizer, None)
    counts.get(0, 10, 14)
    counts.fill({0: [12, 13, 14, 15, 15], 1: [3]})
    assert tokenizer.calls == [4, 3]  # 14 and 15 of book 0, 3 of book 1; no repeat
    counts.fill({0: [10, 15], 1: [3]})
    assert tokenizer.calls == [4, 3]
    assert counts.get(0, 10, 16) == minilm_tokenizer.count_batch(books[0][10:16])
    assert counts.get(1, 3, 4) == minilm_tokenizer.count_batch(books[1][3:4])
    assert tokenizer.calls == [4, 3]


@pytest.mark.parametrize("length", [64, 1000])
def test_prefetch_counts_a_streams_sentences_ahead_and_draws_the_same_stream(
    shared_corpus, minilm_tokenizer, length
):
    plain = SnippetDrawer(shared_corpus, GROUPS, minilm_tokenizer, 3)
    expected = plain.stream("dietary-01", length, 0, length)
    tokenizer = Recording(minilm_tokenizer)
    drawer = SnippetDrawer(shared_corpus, GROUPS, tokenizer, 3)
    drawer.prefetch([("dietary-01", length, 0, length, None)])
    (ahead,) = tokenizer.calls
    assert ahead > 0
    stream = drawer.stream("dietary-01", length, 0, length)
    assert (stream.sentences, stream.counts) == (expected.sentences, expected.counts)
    assert drawer.audit() == plain.audit()
    # Most of what the stream read was counted ahead: the leftovers are few.
    assert sum(tokenizer.calls[1:]) < ahead
    # A draw of --niah-seeds replays its own seed's stream.
    seeded = SnippetDrawer(shared_corpus, GROUPS, tokenizer, 3)
    before = len(tokenizer.calls)
    seeded.prefetch([("dietary-01", length, 0, length, 9)])
    other = SnippetDrawer(shared_corpus, GROUPS, minilm_tokenizer, 9)
    assert seeded.stream("dietary-01", length, 0, length, 9).sentences == (
        other.stream("dietary-01", length, 0, length).sentences
    )
    assert sum(tokenizer.calls[before + 1 :]) < tokenizer.calls[before]


class SlowAhead(Recording):
    """Counting the last length ahead takes a while (a loaded machine's scheduling), while
    the other thread goes on to that length's blocks."""

    def count_batch(self, texts):
        if len(texts) >= 32 and sum(n >= 32 for n in self.calls) == 2:
            time.sleep(1.0)
        return super().count_batch(texts)


@pytest.mark.parametrize("recording", [Recording, SlowAhead])
def test_the_builder_counts_each_length_ahead_and_builds_the_same_haystacks(
    shared_corpus, minilm_tokenizer, recording
):
    """Found in a full run: under load a length's blocks drew their streams before its
    counting ahead had ended and counted the same sentences again in small calls; each
    block now waits for its length's counting ahead."""
    tokenizer = recording(minilm_tokenizer)
    lengths = (128, 512, 2048)
    builder = HaystackBuilder(shared_corpus, GROUPS, tokenizer, 5, threads=2)
    built = [
        b.haystacks for b in builder.blocks(GROUPS.groups, lengths, 3, ("onehop",), ("default",))
    ]
    alone = HaystackBuilder(shared_corpus, GROUPS, minilm_tokenizer, 5, threads=1)
    expected = [
        b.haystacks for b in alone.blocks(GROUPS.groups, lengths, 3, ("onehop",), ("default",))
    ]
    assert built == expected
    big = [n for n in tokenizer.calls if n >= 32]
    assert len(big) >= len(lengths)  # one call per length at least
    assert sum(tokenizer.calls) - sum(big) < sum(big) / 2


def test_few_texts_are_counted_one_by_one_as_the_batch_counts_them(minilm_tokenizer):
    texts = ["The old sailor walked slowly.", "", "Ünïcode — and “quotes”!", "a " * 300]
    one_by_one = minilm_tokenizer.count_batch(texts)
    batched = minilm_tokenizer.count_batch(texts * 10)  # past the one-by-one threshold
    assert one_by_one * 10 == batched
    assert one_by_one == [len(e) for e in minilm_tokenizer.encode_batch(texts)]


def test_counts_all_read_from_the_cache_write_nothing_on_save(word_tokenizer, tmp_path):
    # Found (fresh mutation draw 1863714026, sentence_counts.py:77 the `not self._dirty`
    # clause dropped): a run whose counts were all cached rewrote the file on every save.
    books = [["One two three.", "Four five."], ["Six."]]
    path = tmp_path / "counts.npz"
    first = SentenceCounts(books, word_tokenizer, path)
    counted = first.get(0, 0, 2) + first.get(1, 0, 1)
    first.save()
    before = path.stat()
    again = SentenceCounts(books, word_tokenizer, path)
    assert again.get(0, 0, 2) + again.get(1, 0, 1) == counted
    again.save()
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_an_error_while_counting_a_length_ahead_stops_the_build(shared_corpus, minilm_tokenizer):
    """Counting ahead runs on a building thread; its error reaches the caller instead of
    being dropped while the blocks count for themselves."""

    class FailsAhead(Recording):
        def count_batch(self, texts):
            if len(texts) >= 32 and any(n >= 32 for n in self.calls):
                raise RuntimeError("the tokenizer broke while counting ahead")
            return super().count_batch(texts)

    builder = HaystackBuilder(shared_corpus, GROUPS, FailsAhead(minilm_tokenizer), 5, threads=2)
    with pytest.raises(RuntimeError, match="while counting ahead"):
        list(builder.blocks(GROUPS.groups, (128, 512), 3, ("onehop",), ("default",)))
