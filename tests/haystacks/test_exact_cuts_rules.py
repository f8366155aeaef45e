"""Exact cuts' rules on a tokenizer whose counts are plain to see (one token per word)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.exact_cuts import ExactCuts
from pytest_niah.haystacks.fillers import Stream
from pytest_niah.haystacks.splice import SplicedEncoding

SENTENCES = ["one two three.", "four five six.", "seven eight nine.", "ten eleven twelve."]


def test_a_needle_span_is_its_first_token_and_count(word_tokenizer):
    """First in the file: a broken bisection fails here at once, before a cut loops on it."""
    from pytest_niah.haystacks.exact_cuts import needle_span

    text = "one two three four five."
    (encoding,) = word_tokenizer.encode_batch([text])
    assert needle_span(encoding, text.index("three four"), "three four", "h0") == (2, 2)
    assert needle_span(encoding, 0, "one", "h0") == (0, 1)
    assert needle_span(encoding, text.index("five."), "five.", "h0") == (4, 2)


def test_sentences_counted_high_alone_still_give_the_cut(word_tokenizer):
    """Found (#42.3): where each sentence's own count overstates what it adds joined (a
    byte-level BPE's first word), the larger budget held the same sentences and the cut
    stopped with "not stable under truncation"; the next sentence is taken instead."""
    stream = Stream(SENTENCES, counts=[100] * len(SENTENCES))
    filler = ExactCuts(word_tokenizer).fit(stream, 8, "h1")
    assert filler.tokens == 8
    assert len(word_tokenizer.encode_batch([filler.text])[0]) == 8
    assert filler.text.startswith("one two three.")
    # One sentence more at a time: a filler's parts are those its text was cut from.
    shorter = ExactCuts(word_tokenizer).fit(stream, 5, "h1")
    assert shorter.text == "one two three. four"
    assert shorter.parts == SENTENCES[:2]


def test_a_stream_too_short_for_the_length_is_named(word_tokenizer):
    stream = Stream(SENTENCES[:2], counts=[100, 100])
    with pytest.raises(HaystackError, match="h2: could not cut the text to exactly 50 tokens"):
        ExactCuts(word_tokenizer).fit(stream, 50, "h2")


def test_a_stream_holds_its_length_and_a_slack_for_joins(shared_corpus, word_tokenizer):
    """Found (#42.3): joined, a Metaspace Unigram marking only a text's first word read a
    stream's sentences in fewer tokens than their counts; drawn to the length alone, the
    2,048-token control then had no text left to cut from."""
    from pytest_niah.haystacks.snippet_streams import SnippetDrawer, stream_target
    from pytest_niah.inputs.needles import builtin_needle_set

    assert stream_target(2048) == 2048 + 1 + 128
    assert stream_target(128) == 128 + 1 + 8
    drawer = SnippetDrawer(shared_corpus, builtin_needle_set(), word_tokenizer, 42)
    stream = drawer.stream("dietary-01", 2048, 1, 2048)
    assert sum(stream.counts) >= stream_target(2048)
    # A larger target only adds sentences after those a smaller one drew, and a cut reads
    # a stream's leading sentences: the slack changes no haystack.
    shorter = drawer.stream("dietary-01", 2048, 1, 1024)
    assert len(shorter.sentences) < len(stream.sentences)
    assert stream.sentences[: len(shorter.sentences)] == shorter.sentences


def test_a_needle_the_tokenizer_reads_as_nothing_is_named(minilm_tokenizer):
    """Its span has no token of its own (MiniLM drops zero-width spaces): the needle and the
    fix are named, not an empty span."""
    from pytest_niah.haystacks.exact_cuts import needle_span

    text = "one two \u200b\u200b three four."
    (encoding,) = minilm_tokenizer.encode_batch([text])
    start = text.index("\u200b")
    assert all(not (a < start + 2 and b > start) for a, b in encoding.offsets)
    with pytest.raises(HaystackError, match=r"h3: the needle .* has no tokens of its own"):
        needle_span(encoding, start, "\u200b\u200b", "h3")
    assert needle_span(encoding, text.index("three"), "three", "h4") == (2, 1)


class _Off:
    """An encoding whose length is ``by`` tokens off its text's."""

    def __init__(self, encoding, by):
        self.encoding, self.by = encoding, by

    def __len__(self):
        return len(self.encoding) + self.by


class _SwingingAfterFirstSentence:
    """Words, but a needle right after the first sentence never gives the length: its
    count swings over it whichever way the filler is resized (as a byte-level BPE's rare
    characters next to a needle can)."""

    def __init__(self, inner, length):
        self.inner, self.length = inner, length

    def encode_batch(self, texts):
        out = []
        for text, encoding in zip(texts, self.inner.encode_batch(texts), strict=True):
            if text.startswith("one two three. needle"):
                out.append(_Off(encoding, 1 if len(encoding) >= self.length else -1))
            else:
                out.append(encoding)
        return out


def test_a_needle_whose_count_swings_at_its_gap_moves_to_the_next_gap(word_tokenizer):
    """At the gap after the first sentence no filler size gives the length; the needle
    moves to the nearest other gap (the start) and the haystack is exact there."""
    from pytest_niah.haystacks.fillers import compose

    length = 12
    tokenizer = _SwingingAfterFirstSentence(word_tokenizer, length)
    cuts = ExactCuts(tokenizer)
    stream = Stream(SENTENCES * 3, counts=[4] * 12)
    filler = ExactCuts(word_tokenizer).fit(stream, length - 1, "h4")
    text, char = compose(filler, 4, "needle")
    (encoding,) = tokenizer.encode_batch([text])
    assert len(encoding) != length  # the gap asked for swings
    encoding, text, char, first, count = cuts.verified(
        "h4",
        stream=stream,
        length=length,
        needle="needle",
        needle_tokens=1,
        encoding=encoding,
        text=text,
        needle_char=char,
        offset=4,
        between="sentences",
    )
    assert len(encoding) == length and (char, first, count) == (0, 0, 1)
    assert text.startswith("needle one two three.")


class _Sized:
    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size


class _AlwaysOneShort:
    """Every text reads as one token short of the length asked for: no cut ever gives it."""

    def __init__(self, length):
        self.length, self.calls = length, 0

    def encode_batch(self, texts):
        self.calls += len(texts)
        return [_Sized(self.length - 1) for _ in texts]


def test_a_cut_that_never_gives_the_length_gives_up_after_a_fixed_budget():
    """86 tokenizations (6 attempts, 32 split characters, 48 grown ones), then the error:
    neither an endless loop on a long stream nor fewer tries than the hard cases take."""
    stream = Stream([f"sentence number {i}." for i in range(400)], counts=[9] * 400)
    tokenizer = _AlwaysOneShort(50)
    with pytest.raises(HaystackError, match="h9: could not cut the text to exactly 50 tokens"):
        ExactCuts(tokenizer).fit(stream, 50, "h9")
    assert tokenizer.calls == 6 + 32 + 48


def _spans(spans):
    """An encoding of these tokens' character spans (ids: the spans' starts)."""
    starts, ends = (np.array(column, dtype=np.int64) for column in zip(*spans, strict=True))
    return SplicedEncoding(starts.copy(), starts, ends)


class _ResegmentingPrefix:
    """Words, but "xyzw" reads as x|yz|w whole while its prefixes read as one token each
    (as a unigram model segments a cut word anew)."""

    def encode_batch(self, texts):
        out = []
        for text in texts:
            spans, start = [], 0
            for word in text.split(" "):
                if word == "xyzw":
                    spans += [(start, start + 1), (start + 1, start + 3), (start + 3, start + 4)]
                elif word:
                    spans.append((start, start + len(word)))
                start += len(word) + 1
            out.append(_spans(spans))
        return out


def test_a_character_that_takes_a_grown_cut_past_the_length_is_left_out():
    """Cut after "yz", "xyz" alone is one token short; grown by "w" it is one over: "w" is
    left out of the filler and the next word gives the length."""
    stream = Stream(["a b xyzw c d."], counts=[8])
    filler = ExactCuts(_ResegmentingPrefix()).fit(stream, 4, "h5")
    assert filler.text == "a b xyz c"
    assert filler.tokens == 4


class _CountingCuts(ExactCuts):
    """ExactCuts that counts its fits (a fit is the costly part: tokenizer calls)."""

    fits: list[int]

    def fit(self, stream, tokens, what):
        self.fits.append(tokens)
        return super().fit(stream, tokens, what)


def test_needles_of_one_size_that_miss_alike_share_one_refit(word_tokenizer):
    """A block's needles of one size miss their length alike (a needle read in fewer
    tokens inside a text than alone); the filler refitted for the first is the filler of
    the others: the stream is fitted once per size, and each haystack is the one a fresh
    refit gives."""
    from pytest_niah.haystacks.fillers import compose

    length = 12
    stream = Stream(SENTENCES * 3, counts=[4] * 12)
    filler = ExactCuts(word_tokenizer).fit(stream, length - 1, "h5")
    text, char = compose(filler, 4, "needle")

    def verify(cuts, refits=None):
        return cuts.verified(
            "h5",
            stream=stream,
            length=length,
            needle="needle",
            needle_tokens=1,
            encoding=_Sized(length - 1),  # as if the needle read a token short in place
            text=text,
            needle_char=char,
            offset=4,
            between="sentences",
            refits=refits,
        )

    cuts = _CountingCuts(word_tokenizer)
    cuts.fits = []
    refits: dict = {}
    first = verify(cuts, refits)
    fitted = list(cuts.fits)
    assert fitted and len(first[0]) == length
    second = verify(cuts, refits)
    assert cuts.fits == fitted  # no fit again for the same sizes
    alone = verify(cuts)  # no refits given: a fit of its own
    assert cuts.fits == fitted * 2
    assert first[1:] == second[1:] == alone[1:]
    assert list(first[0].ids) == list(second[0].ids) == list(alone[0].ids)


class _Spans:
    """An encoding given by its tokens' character spans (None: a token of no text)."""

    def __init__(self, spans):
        self.spans = spans

    def __len__(self):
        return len(self.spans)

    def token_to_chars(self, index):
        return self.spans[index]


def test_a_token_of_no_text_inside_an_encoding_is_stepped_over():
    """A special token between texts has no characters; the bisection for the needle's
    tokens steps over it (a survivor of a sweep: the `span is not None` clause dropped)."""
    from pytest_niah.haystacks.exact_cuts import needle_span

    encoding = _Spans([(0, 3), (4, 7), None, (8, 13), (14, 19), (20, 25)])
    assert needle_span(encoding, 8, "three four", "h6") == (3, 2)
    assert needle_span(encoding, 0, "one", "h6") == (0, 1)


def test_a_needle_that_swings_at_the_end_moves_to_the_nearest_gap_before_it(word_tokenizer):
    """A needle placed last whose count swings there (one too many, then one too few) is
    moved to the nearest other gap, the one before the filler's last word; no other gap is
    avoided (a survivor of a sweep: `-1 in avoid` -> `not in` avoided the end from the
    start and put the needle four words further back)."""
    from pytest_niah.haystacks.fillers import compose

    length = 12
    stream = Stream(SENTENCES * 3, counts=[4] * 12)
    filler = ExactCuts(word_tokenizer).fit(stream, length - 1, "h7")
    text, char = compose(filler, filler.tokens, "needle")
    assert text.endswith(" needle")
    encoding, text, char, first, count = ExactCuts(word_tokenizer).verified(
        "h7",
        stream=stream,
        length=length,
        needle="needle",
        needle_tokens=1,
        encoding=_Sized(length + 1),  # as if a join had split a token: one too many
        text=text,
        needle_char=char,
        offset=filler.tokens,
        between="words",
    )
    assert len(encoding) == length
    assert text == "one two three. four five six. seven eight needle nine"
    assert (first, count) == (10, 1)


class _NoTextAfter:
    """The word tokenizer, but the token at index ``at`` has no characters (as a special
    token has): a cut just before it has no next token to compare with."""

    def __init__(self, inner, at):
        self.inner, self.at = inner, at

    def encode_batch(self, texts):
        return [_NoTextToken(e, self.at) for e in self.inner.encode_batch(texts)]


class _NoTextToken:
    def __init__(self, inner, at):
        self.inner, self.at = inner, at

    def __len__(self):
        return len(self.inner)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def token_to_chars(self, index):
        return None if index == self.at else self.inner.token_to_chars(index)


def test_a_cut_before_a_token_of_no_text_is_cut_there(word_tokenizer):
    """The token after a cut may have no characters; the cut is then not inside a split
    character, and ends where its last token ends (a survivor of a sweep: the `following
    is not None` clause dropped)."""
    stream = Stream(SENTENCES * 3, counts=[4] * 12)
    plain = ExactCuts(word_tokenizer).fit(stream, 6, "h8")
    filler = ExactCuts(_NoTextAfter(word_tokenizer, 6)).fit(stream, 6, "h8")
    assert filler.text == plain.text == "one two three. four five"
    assert filler.tokens == 6
