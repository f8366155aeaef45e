"""How often the builder tokenizes, and that its shortcuts change no byte (haystacks.builder)."""

from __future__ import annotations

from typing import ClassVar

import pytest
from haystack_building import GROUPS, build, check_haystack

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.exact_cuts import ExactCuts


def test_a_first_try_that_misses_is_rebuilt_to_an_exact_length(shared_corpus, word_tokenizer):
    """The batch of first tries may miss (joins can merge tokens); each miss is rebuilt alone."""

    class Flaky:
        identity = word_tokenizer.identity
        missed = False

        def encode_batch(self, texts):
            out = word_tokenizer.encode_batch(texts)
            needles_in = len(texts) > 1 and all(len(e.ids) >= 128 for e in out)
            if needles_in and not Flaky.missed:  # the first batch of needle haystacks
                Flaky.missed = True
                out[-1].ids = out[-1].ids[:-1]  # the last needle haystack (controls come first)
            return out

    _, haystacks = build(shared_corpus, Flaky(), lengths=(128,), positions=3)
    _, reference = build(shared_corpus, word_tokenizer, lengths=(128,), positions=3)
    assert Flaky.missed, "the needle haystacks were not tokenized in one batch"
    for h in haystacks:
        check_haystack(h, word_tokenizer)
    assert len(haystacks) == len(reference)


@pytest.mark.parametrize("which", ["minilm_tokenizer", "static_tokenizer", "word_tokenizer"])
def test_fillers_cut_from_the_control_are_those_tokenized_alone(
    request, shared_corpus, monkeypatch, which
):
    """Cutting needle fillers from the control's tokens gives the bytes that tokenizing each
    filler on its own gives (#14: tokenize once): same texts, needle offsets and gaps."""
    tokenizer = request.getfixturevalue(which)
    lengths = (128, 1000)
    _, fast = build(shared_corpus, tokenizer, lengths=lengths, positions=10)
    monkeypatch.setattr(ExactCuts, "cut", ExactCuts.fit)
    _, exact = build(shared_corpus, tokenizer, lengths=lengths, positions=10)
    assert [h.id for h in fast] == [h.id for h in exact]
    assert fast == exact


def test_each_haystack_is_tokenized_once_and_each_control_twice(shared_corpus, minilm_tokenizer):
    """Per block, one call cuts the control and one batch checks it and every composed
    haystack: no filler is tokenized on its own (#14: the build's cost is one tokenization)."""

    class Counting:
        identity = minilm_tokenizer.identity
        long_texts: ClassVar[list[int]] = []

        def encode_batch(self, texts):
            out = minilm_tokenizer.encode_batch(texts)
            Counting.long_texts.append(sum(len(e.ids) >= 100 for e in out))
            return out

    _, haystacks = build(shared_corpus, Counting(), lengths=(512,), positions=10)
    blocks = len(GROUPS.groups)
    cases = sum(not h.is_control for h in haystacks)
    # A composed haystack whose joins merged tokens is rebuilt alone: a few may be.
    assert 2 * blocks + cases <= sum(Counting.long_texts) <= 2 * blocks + cases + cases // 20
    for h in haystacks:
        check_haystack(h, minilm_tokenizer)


def test_a_control_cut_that_misses_is_fitted_again(shared_corpus, word_tokenizer):
    """A cut whose text does not tokenize to exactly L tokens (a tokenizer whose tokens
    before a cut depend on the text after it) is caught, and the block is built again with
    every filler tokenized on its own; the result is the same exact haystacks."""

    class Unstable:
        """Every control checked in a block's batch misses (the retry's fits, one text
        each, and its batch of needle haystacks do not)."""

        identity = word_tokenizer.identity
        misses = 0
        needles: ClassVar[set[str]] = set()

        def encode_batch(self, texts):
            out = word_tokenizer.encode_batch(texts)
            if all(len(e.ids) < 64 for e in out):
                Unstable.needles.update(texts)  # a block's needles, encoded first
            elif len(texts) > 1 and not any(n in texts[0] for n in Unstable.needles):
                Unstable.misses += 1  # a control, checked in the batch
                out[0].ids = out[0].ids[:-1]
            return out

    _, haystacks = build(shared_corpus, Unstable(), lengths=(128,), positions=3)
    _, reference = build(shared_corpus, word_tokenizer, lengths=(128,), positions=3)
    assert Unstable.misses >= len(GROUPS.groups)  # every block's first try
    assert haystacks == reference
    for h in haystacks:
        check_haystack(h, word_tokenizer)


@pytest.mark.parametrize("which", ["minilm_tokenizer", "static_tokenizer", "word_tokenizer"])
def test_word_slots_are_the_tokens_that_follow_white_space(request, shared_corpus, which):
    from pytest_niah.haystacks.fillers import Filler

    tokenizer = request.getfixturevalue(which)
    text = " ".join(shared_corpus.books[0].sentences[100:160])
    (encoding,) = tokenizer.encode_batch([text])
    tokens = len(encoding.ids)
    for filler in (
        Filler(text, encoding, tokens, [], []),
        Filler(text, encoding, tokens, [], []).prefix(tokens // 2),
    ):
        expected = {0, filler.tokens}
        for i in range(1, filler.tokens):
            start = encoding.token_to_chars(i)[0]
            if start > 0 and filler.text[start - 1].isspace():
                expected.add(i)
        assert filler.word_slots() == sorted(expected)
        assert len(expected) > filler.tokens // 3  # most tokens of English prose start a word


def test_building_on_several_threads_changes_no_byte(shared_corpus, minilm_tokenizer):
    """Blocks are built several at a time; haystacks, their order and the audit's counts
    are those of a build on one thread."""

    def run(threads):
        builder = HaystackBuilder(shared_corpus, GROUPS, minilm_tokenizer, 7, None, threads)
        blocks = list(
            builder.blocks(GROUPS.groups, (128, 512), 4, ("onehop",), ("default", "inverted"))
        )
        return (
            [b.haystacks for b in blocks],
            [[e.ids for e in b.encodings] for b in blocks],
            (builder.audit()),
        )

    one, three = run(1), run(3)
    assert one == three
    assert one[2].snippets_used > 0


@pytest.mark.parametrize("which", ["minilm_tokenizer", "static_tokenizer"])
def test_counting_without_offsets_gives_the_encoded_counts(request, shared_corpus, which):
    """Sentence counts come from the tokenizer's offset-free path: the same numbers."""
    from pytest_niah.haystacks.tokens import CountingTokenizer, token_counts

    tokenizer = request.getfixturevalue(which)
    assert isinstance(tokenizer, CountingTokenizer)
    sentences = shared_corpus.books[1].sentences[:400]
    assert token_counts(tokenizer, sentences) == [
        len(e.ids) for e in tokenizer.encode_batch(sentences)
    ]
    assert token_counts(tokenizer, sentences) != [len(s.split()) for s in sentences]


def test_a_block_fits_its_needle_stream_once_per_size(
    shared_corpus, ws_metaspace_first_tokenizer, monkeypatch
):
    """A Metaspace marking only a text's first word reads a needle in one token fewer
    inside a haystack than alone, so every needle haystack of a size misses its first try
    alike; the block refits its stream once per size, not once per haystack."""
    fits: list[tuple[int, int]] = []
    fit = ExactCuts.fit

    def counted(self, stream, tokens, what):
        fits.append((id(stream), tokens))
        return fit(self, stream, tokens, what)

    monkeypatch.setattr(ExactCuts, "fit", counted)
    builder = HaystackBuilder(shared_corpus, GROUPS, ws_metaspace_first_tokenizer, 1, None, 1)
    (group,) = GROUPS.select(["dietary-01"]).groups
    block = builder.block(group, 256, 10, ("onehop",), ("default", "inverted"))
    assert len(fits) > 1  # needles missed and were refitted
    assert len(fits) == len(set(fits))
    for haystack, carried in zip(block.haystacks, block.encodings, strict=True):
        (own,) = ws_metaspace_first_tokenizer.encode_batch([haystack.text])
        assert list(carried.ids) == list(own.ids) and len(own) == 256, haystack.id


def test_a_spliced_haystack_whose_count_changed_is_not_tokenized_again(
    shared_corpus, v4_tokenizer, monkeypatch
):
    """Qwen2's byte-level BPE reads many needles in another count after a space than alone,
    so spliced haystacks miss their length; their spliced tokens are their text's (the
    junctions checked), so the block hands them to the refit as they are instead of
    tokenizing each 1,024-token text again."""
    from pytest_niah.haystacks.assembly import Assembler

    seen: list[str] = []  # what the tokenizer read while in token space
    counts: list[int] = []
    spliced_of = Assembler._spliced
    encode_batch = type(v4_tokenizer).encode_batch
    recording = [False]

    def spliced(self, parts, *rest):
        recording[0] = True
        try:
            found = spliced_of(self, parts, *rest)
        finally:
            recording[0] = False
        counts.extend(len(e) - parts.length for e in found or ())
        return found

    def recorded(self, texts, *rest, **named):
        if recording[0]:
            seen.extend(texts)
        return encode_batch(self, texts, *rest, **named)

    monkeypatch.setattr(Assembler, "_spliced", spliced)
    monkeypatch.setattr(type(v4_tokenizer), "encode_batch", recorded)
    builder = HaystackBuilder(shared_corpus, GROUPS, v4_tokenizer, 1, None, 1, splice=True)
    (group,) = GROUPS.select(["dietary-01"]).groups
    block = builder.block(group, 1024, 10, ("onehop",), ("default", "inverted"))
    assert any(counts) and counts.count(0)  # some spliced haystacks missed, some did not
    longest = max(len(e) for e in encode_batch(v4_tokenizer, seen))
    assert longest < 100  # needles, first words, tails and junction windows only
    for haystack, carried in zip(block.haystacks, block.encodings, strict=True):
        (own,) = encode_batch(v4_tokenizer, [haystack.text])
        assert list(carried.ids) == list(own.ids) and len(own) == 1024, haystack.id
