"""Needle haystacks spliced in token space are the haystacks built and tokenized as text."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from pytest_niah.embed.fast_tokenizer import HaystackTokenizer
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.splice import SplicedEncoding
from pytest_niah.inputs.needles import builtin_needle_set

GROUPS = builtin_needle_set().select(["dietary-01", "location-02", "hobby-03"])
GRID = (GROUPS.groups, (128, 512, 2048), 5, ("onehop", "literal"), ("default", "inverted"), 2)


@pytest.mark.parametrize("which", ["minilm_tokenizer", "static_tokenizer"])
def test_spliced_haystacks_are_exactly_the_haystacks_tokenized_as_text(
    request, shared_corpus, which
):
    tokenizer = request.getfixturevalue(which)
    assert tokenizer.splits_at_spaces
    built = {}
    for splice in (False, True):
        builder = HaystackBuilder(shared_corpus, GROUPS, tokenizer, 7, splice=splice)
        built[splice] = list(builder.blocks(*GRID))
    spliced = 0
    for text_block, id_block in zip(built[False], built[True], strict=True):
        assert id_block.haystacks == text_block.haystacks  # texts, needle offsets, ids
        own = tokenizer.encode_batch([h.text for h in id_block.haystacks])
        for h, encoding, truth in zip(id_block.haystacks, id_block.encodings, own, strict=True):
            spliced += isinstance(encoding, SplicedEncoding)
            assert list(encoding.ids) == truth.ids and len(truth.ids) == h.length, h.id
            assert encoding.offsets == truth.offsets, h.id
            if not h.is_control:
                assert truth.char_to_token(h.needle_char) == h.needle_offset, h.id
                assert encoding.char_to_token(h.needle_char) == h.needle_offset, h.id
    needle_haystacks = sum(not h.is_control for b in built[True] for h in b.haystacks)
    # Most blocks are spliced; one whose cut last word segments anew alone (a unigram
    # model) is tokenized as text, as before.
    assert spliced >= needle_haystacks // 2


def _tokenizer(pre, norm=None) -> HaystackTokenizer:
    backend = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre
    if norm is not None:
        backend.normalizer = norm
    return HaystackTokenizer(backend)


@pytest.mark.parametrize(
    ("pre", "norm", "splits"),
    [
        (pre_tokenizers.BertPreTokenizer(), normalizers.BertNormalizer(), True),
        (
            pre_tokenizers.Sequence(
                [
                    pre_tokenizers.WhitespaceSplit(),
                    pre_tokenizers.Metaspace(prepend_scheme="always"),
                ]
            ),
            None,
            True,
        ),
        # A marker only on the first piece, bytes with their spaces, no splitting at all, or
        # a normalizer that rewrites across characters: tokens depend on their neighbours.
        (
            pre_tokenizers.Sequence(
                [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="first")]
            ),
            None,
            False,
        ),
        (pre_tokenizers.ByteLevel(), None, False),
        (None, None, False),
        (pre_tokenizers.WhitespaceSplit(), normalizers.Replace(" ", ""), False),
    ],
)
def test_only_tokenizers_that_split_at_spaces_first_are_spliced(pre, norm, splits):
    assert _tokenizer(pre, norm).splits_at_spaces is splits


def test_a_tokenizer_without_the_property_is_never_spliced(shared_corpus, word_tokenizer):
    builder = HaystackBuilder(shared_corpus, GROUPS, word_tokenizer, 7, splice=True)
    block = next(iter(builder.blocks(*GRID)))
    assert not any(isinstance(e, SplicedEncoding) for e in block.encodings)


def test_a_needle_slot_between_a_lone_word_marker_and_its_word_is_built_from_text(
    static_tokenizer, shared_corpus
):
    """The static model's unigram reads " brook" as "▁" + "brook", both starting at "b".

    A needle slot between the two is a word start in characters but no boundary in ids
    (found on the full default grid: language-04, 128 tokens, position 7 of 10).
    """
    needle_set = builtin_needle_set()
    (group,) = needle_set.select(["language-04"]).groups
    blocks = {}
    for splice in (False, True):
        builder = HaystackBuilder(shared_corpus, needle_set, static_tokenizer, 42, splice=splice)
        blocks[splice] = builder.block(group, 128, 10, ("onehop",), ("default", "inverted"))
    assert blocks[True].haystacks == blocks[False].haystacks
    own = static_tokenizer.encode_batch([h.text for h in blocks[True].haystacks])
    assert [list(e.ids) for e in blocks[True].encodings] == [e.ids for e in own]


def test_a_needle_junction_the_tokenizer_reads_across_is_built_from_text(
    shared_corpus, minilm_tokenizer
):
    """A tokenizer let splice needles although an added token (". the") spans the space after
    a needle's full stop: the junction check finds the ids around the edge are not the
    text's, and those haystacks are tokenized as text."""
    from standins import with_added
    from tokenizers import AddedToken

    tokenizer = with_added(minilm_tokenizer, AddedToken(". the", special=False))
    tokenizer.__dict__["splices_needles"] = True  # as if the property had missed it
    builder = HaystackBuilder(shared_corpus, GROUPS, tokenizer, 7, splice=True)
    blocks = list(builder.blocks(*GRID))
    haystacks = [(h, e) for b in blocks for h, e in zip(b.haystacks, b.encodings, strict=True)]
    own = tokenizer.encode_batch([h.text for h, _ in haystacks])
    assert any(". the" in h.text.lower() for h, _ in haystacks)
    for (haystack, carried), truth in zip(haystacks, own, strict=True):
        assert list(carried.ids) == truth.ids, haystack.id


def test_a_junction_read_across_at_a_needles_end_only_is_built_from_text(
    shared_corpus, minilm_tokenizer, tmp_path
):
    """An added token ("day. the") that only a needle's last word and the filler's next word
    make: the needle's start and the fillers read as they did alone, its end does not, and
    the check at the end sends that block to text. Found (fresh mutation draw 1863714026,
    assembly.py:163 `Add -> Sub`): the end edge checked at the start minus the needle's
    length let a 512-token haystack carry ids that were not its text's."""
    from standins import with_added
    from test_hostile_needles import needle_set
    from tokenizers import AddedToken

    tokenizer = with_added(minilm_tokenizer, AddedToken("day. the", special=False))
    tokenizer.__dict__["splices_needles"] = True  # as if the property had missed it
    needles = needle_set(tmp_path, "", "", "")  # each needle ends "... every day."
    builder = HaystackBuilder(shared_corpus, needles, tokenizer, 7, splice=True)
    blocks = builder.blocks(needles.groups, (256, 512), 10, ("onehop",), ("default",))
    haystacks = [(h, e) for b in blocks for h, e in zip(b.haystacks, b.encodings, strict=True)]
    assert any("day. the" in h.text.lower() for h, _ in haystacks)
    own = tokenizer.encode_batch([h.text for h, _ in haystacks])
    for (haystack, carried), truth in zip(haystacks, own, strict=True):
        assert list(carried.ids) == truth.ids, haystack.id
    assert any(isinstance(e, SplicedEncoding) for _, e in haystacks)  # the rest spliced


def test_a_needle_put_first_is_spliced_with_its_fillers_first_word_read_after_a_space(
    shared_corpus, gpt2_tokenizer
):
    """A byte-level BPE reads the filler's first word otherwise after the needle's space:
    its tokens are re-read (the head), so needles put first are spliced too, not rebuilt."""
    builder = HaystackBuilder(shared_corpus, GROUPS, gpt2_tokenizer, 7, splice=True)
    first = [
        (h, e)
        for b in builder.blocks(*GRID)
        for h, e in zip(b.haystacks, b.encodings, strict=True)
        if not h.is_control and h.needle_char == 0
    ]
    assert first
    own = gpt2_tokenizer.encode_batch([h.text for h, _ in first])
    assert [list(e.ids) for _, e in first] == [e.ids for e in own]
    spliced = sum(isinstance(e, SplicedEncoding) for _, e in first)
    assert spliced >= len(first) // 2, (spliced, len(first))
