"""Fillers cut from sentence token ids encoded once per tokenizer (haystacks.sentence_tokens).

For a tokenizer that splits at white space first, sentences joined by spaces have exactly
their own tokens in order: controls are cut from those, no filler text is tokenized per
haystack, and the ids are kept on disk like the counts.
"""

from __future__ import annotations

import pytest

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.sentence_tokens import SentenceTokens, tokens_file
from pytest_niah.haystacks.splice import SplicedEncoding
from pytest_niah.inputs.needles import builtin_needle_set

GROUPS = builtin_needle_set().select(["dietary-01", "location-02"])
GRID = (GROUPS.groups, (128, 1024), 4, ("onehop",), ("default", "inverted"), 2)


class Recording:
    """A splitting tokenizer that records the longest encoding of every call."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.splits_at_spaces = inner.splits_at_spaces
        self.longest: list[int] = []

    def encode_batch(self, texts):
        out = self.inner.encode_batch(texts)
        self.longest.append(max((len(e) for e in out), default=0))
        return out


@pytest.mark.parametrize("which", ["minilm_tokenizer", "static_tokenizer"])
def test_joined_sentence_tokens_are_the_joined_text_tokenized(request, shared_corpus, which):
    tokenizer = request.getfixturevalue(which)
    books = [book.sentences for book in shared_corpus.books]
    tokens = SentenceTokens(books, tokenizer, None)
    refs = [(1, i) for i in range(200, 260)] + [(0, i) for i in range(5, 40)]
    tokens.fill({0: range(5, 40), 1: range(200, 260)})
    sentences = [books[b][i] for b, i in refs]
    text = " ".join(sentences)
    joined = tokens.joined(refs, sentences)
    (truth,) = tokenizer.encode_batch([text])
    assert list(joined.ids) == truth.ids and joined.offsets == truth.offsets
    for char in range(len(text)):
        assert joined.char_to_token(char) == truth.char_to_token(char), char
    assert tokens.get(1, 200, 210) == [len(e) for e in tokenizer.encode_batch(books[1][200:210])]


def test_sentence_tokens_persist_and_a_damaged_file_is_encoded_again(
    shared_corpus, static_tokenizer, tmp_path
):
    books = [book.sentences for book in shared_corpus.books]
    path = tokens_file(tmp_path, static_tokenizer.identity, shared_corpus.fingerprint())
    assert path is not None
    first = SentenceTokens(books, static_tokenizer, path)
    first.fill({0: range(0, 30), 2: range(100, 140)})
    first.save()
    refs = [(2, i) for i in range(100, 140)]
    sentences = [books[2][i] for i in range(100, 140)]
    expected = first.joined(refs, sentences)
    recording = Recording(static_tokenizer)
    again = SentenceTokens(books, recording, path)
    assert again.get(0, 0, 30) == first.get(0, 0, 30)
    assert list(again.joined(refs, sentences).ids) == list(expected.ids)
    assert again.joined(refs, sentences).offsets == expected.offsets
    assert recording.longest == []  # read from the file, nothing encoded
    path.write_bytes(path.read_bytes()[:200])  # truncated
    damaged = SentenceTokens(books, recording, path)
    assert damaged.get(0, 0, 30) == first.get(0, 0, 30)
    assert len(recording.longest) == 1


@pytest.mark.parametrize("which", ["minilm_tokenizer", "static_tokenizer"])
def test_a_warm_build_tokenizes_no_filler_text(request, shared_corpus, tmp_path, which):
    """With the sentence tokens cached, a build's tokenizer calls are the needles' and the
    controls' cut last words: no control text is tokenized, and a haystack's text only in a
    block built from text (its cut last word tokenizes otherwise alone: one call for the
    block). The haystacks are those built and checked as text."""
    tokenizer = request.getfixturevalue(which)
    cold = HaystackBuilder(shared_corpus, GROUPS, tokenizer, 7, tmp_path, splice=True)
    list(cold.blocks(*GRID))
    recording = Recording(tokenizer)
    warm = HaystackBuilder(shared_corpus, GROUPS, recording, 7, tmp_path, splice=True)
    blocks = list(warm.blocks(*GRID))
    from_text = sum(not isinstance(b.encodings[-1], SplicedEncoding) for b in blocks)
    assert from_text < len(blocks)  # most blocks are built in token space
    # Needles and cut words are short; each block built from text is one call.
    assert sum(n >= 64 for n in recording.longest) == from_text
    as_text = HaystackBuilder(shared_corpus, GROUPS, tokenizer, 7, splice=False)
    assert [b.haystacks for b in blocks] == [b.haystacks for b in as_text.blocks(*GRID)]
    for block in blocks:
        truth = tokenizer.encode_batch([h.text for h in block.haystacks])
        assert [list(e.ids) for e in block.encodings] == [e.ids for e in truth]


def test_few_texts_are_encoded_one_by_one_as_the_batch_encodes_them(minilm_tokenizer):
    texts = ["The old sailor walked slowly.", "", "Ünïcode — and “quotes”!", "a " * 300]
    alone = minilm_tokenizer.encode_batch(texts)
    batched = minilm_tokenizer.encode_batch(texts * 10)  # past the one-by-one threshold
    assert [(e.ids, e.offsets) for e in alone] * 10 == [(e.ids, e.offsets) for e in batched]
