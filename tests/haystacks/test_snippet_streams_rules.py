"""Snippet streams' rules: a snippet's budget, misses in a row, the audit's counts, joined
tokens, a corpus without sentences (on the word tokenizer, whose counts are plain to see)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.haystacks.snippet_streams import MAX_SNIPPET_TOKENS, SnippetDrawer
from pytest_niah.inputs.needles import builtin_needle_set


def test_every_snippet_stays_within_its_token_budget(shared_corpus, word_tokenizer):
    drawer = SnippetDrawer(shared_corpus, builtin_needle_set(), word_tokenizer, 42)
    rng = np.random.default_rng(3)
    drawn = [s for s in (drawer._snippet(rng) for _ in range(40)) if s is not None]
    assert len(drawn) >= 20
    assert all(0 < sum(counts) <= MAX_SNIPPET_TOKENS for _, counts, _ in drawn)


def test_a_corpus_without_a_sentence_is_named_with_the_fix(word_tokenizer):
    from pytest_niah.errors import HaystackError
    from pytest_niah.inputs.books import Book, Corpus

    empty = Corpus(name="blank", books=(Book(name="b", text="   \n\n ", source="-", sha256="0"),))
    with pytest.raises(HaystackError, match="corpus 'blank' has no sentences") as raised:
        SnippetDrawer(empty, builtin_needle_set(), word_tokenizer, 42)
    assert "--niah-corpus" in str(raised.value)


def test_no_leading_sentences_have_no_joined_tokens(shared_corpus, word_tokenizer):
    """Zero sentences joined: no tokens to give (the caller tokenizes the text, empty)."""
    drawer = SnippetDrawer(shared_corpus, builtin_needle_set(), word_tokenizer, 42, tokens=True)
    stream = drawer.stream("dietary-01", 128, 1, 128)
    assert drawer.joined(stream, 0) is None
    joined = drawer.joined(stream, 2)
    assert joined is not None
    assert joined.ids == word_tokenizer.encode_batch([" ".join(stream.sentences[:2])])[0].ids


def test_an_audit_counts_no_long_sentence_where_none_was_met(tiny_corpus, word_tokenizer):
    drawer = SnippetDrawer(tiny_corpus, builtin_needle_set(), word_tokenizer, 42)
    drawer.stream("dietary-01", 128, 1, 128)
    audit = drawer.audit()
    assert audit.snippets_used > 0 and audit.snippets_rejected == 0
    assert audit.sentences_too_long == 0


def test_only_misses_in_a_row_stop_a_stream(tiny_corpus, word_tokenizer, monkeypatch):
    """The limit counts consecutive rejections: a snippet used starts the count again."""
    from pytest_niah.errors import HaystackError
    from pytest_niah.haystacks import snippet_streams

    monkeypatch.setattr(snippet_streams, "MAX_CONSECUTIVE_REJECTS", 3)
    snippet = (["Ann met Bob."], [4], [(0, 0)])

    def scripted(answers):
        drawer = SnippetDrawer(tiny_corpus, builtin_needle_set(), word_tokenizer, 42)
        replies = iter(answers)
        monkeypatch.setattr(drawer, "_snippet", lambda rng: next(replies))
        return drawer

    three_in_a_row = [snippet, None, None, None, snippet, None, None, None, snippet]
    stream = scripted(three_in_a_row).stream("dietary-01", 4, 1, 4)
    assert stream.counts == [4, 4]  # past stream_target(4) = 5 after the second
    with pytest.raises(HaystackError, match="4 snippets in a row were rejected"):
        scripted([snippet, None, None, None, None]).stream("dietary-01", 4, 1, 4)
