"""Exact haystacks on every tokenizer family: the ids a haystack carries are its text's.

The built-in needle set on WordPiece, static, the stand-ins of the study's models (a
converted XLM-R sentencepiece, Qwen2's and GPT-2's byte-level BPEs, Metaspace Unigrams with
every prepend scheme), a byte-level BPE with a prefix space and a tiktoken encoding: no
needle is refused, every haystack holds exactly its length, its ids are the tokenizer's own
encoding of its text, and the needle's span is read off that encoding's offsets.
"""

from __future__ import annotations

import importlib
import random
import sys
from pathlib import Path

import pytest
from standins import EVERY_TOKENIZER, variant, with_added
from tokenizers import AddedToken

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.splice import SplicedEncoding
from pytest_niah.inputs.needles import builtin_needle_set

VARIANTS = ("metaspace_never", "metaspace_first", "gpt2_prefix_space", "tiktoken")


@pytest.fixture(scope="module")
def metaspace_never(metaspace_tokenizer):
    return variant(metaspace_tokenizer, prepend_scheme="never")


@pytest.fixture(scope="module")
def metaspace_first(metaspace_tokenizer):
    return variant(metaspace_tokenizer, prepend_scheme="first")


@pytest.fixture(scope="module")
def gpt2_prefix_space(gpt2_tokenizer):
    return variant(gpt2_tokenizer, add_prefix_space=True)


@pytest.fixture(scope="module")
def tiktoken():
    from pytest_niah.embed.tiktoken_tokenizer import TiktokenTokenizer

    sys.path.insert(0, str(Path(__file__).parents[1] / "embed" / "tiktoken_tokenizer"))
    try:
        ranks = importlib.import_module("tiktoken_ranks")
    finally:
        sys.path.pop(0)
    return TiktokenTokenizer(ranks.RANKS_ENCODING)


@pytest.fixture(scope="module")
def sentence_cache(tmp_path_factory):
    """The books' sentence counts per tokenizer, counted once for this module's tests."""
    return tmp_path_factory.mktemp("sentence-counts")


def haystacks_and_encodings(corpus, tokenizer, needle_set, lengths, positions=3, cache=None):
    builder = HaystackBuilder(corpus, needle_set, tokenizer, 1, cache, splice=True)
    blocks = builder.blocks(
        needle_set.groups, lengths, positions, ("onehop", "literal"), ("default", "inverted")
    )
    return [pair for block in blocks for pair in zip(block.haystacks, block.encodings, strict=True)]


def check_exact(haystack, carried, tokenizer) -> None:
    """The carried ids are the text's; the length and the needle's span are the claimed."""
    (own,) = tokenizer.encode_batch([haystack.text])
    assert list(carried.ids) == list(own.ids), haystack.id
    assert len(own) == haystack.length, haystack.id
    if haystack.is_control:
        return
    start = haystack.needle_char
    end = start + len(haystack.needle.rstrip())
    assert haystack.text[start : start + len(haystack.needle)] == haystack.needle
    covering = [i for i, (a, b) in enumerate(own.offsets) if a < end and b > start]
    assert covering, haystack.id
    assert haystack.needle_offset == covering[0], haystack.id
    assert haystack.needle_tokens == covering[-1] - covering[0] + 1, haystack.id


@pytest.mark.parametrize("which", [*EVERY_TOKENIZER, *VARIANTS])
def test_the_builtin_needle_set_builds_exact_haystacks_on_every_family(
    request, shared_corpus, sentence_cache, which
):
    tokenizer = request.getfixturevalue(which)
    needle_set = builtin_needle_set()
    built = haystacks_and_encodings(
        shared_corpus, tokenizer, needle_set, (128,), cache=sentence_cache
    )
    assert len(built) == 28 * (1 + 3 * 4)  # no needle refused
    for haystack, carried in built:
        check_exact(haystack, carried, tokenizer)


@pytest.mark.parametrize("which", ["v3_tokenizer", "v4_tokenizer", "gpt2_tokenizer"])
def test_the_seed_families_are_spliced_in_token_space(request, shared_corpus, which):
    """Metaspace (XLM-R) and byte-level (Qwen2, GPT-2) needle haystacks come from the
    fillers' tokens, their junctions checked (most of them: a needle put first changes its
    filler's first word, and such a haystack is tokenized as text)."""
    tokenizer = request.getfixturevalue(which)
    assert tokenizer.splices_needles
    built = haystacks_and_encodings(shared_corpus, tokenizer, builtin_needle_set(), (128,))
    needles = [e for h, e in built if not h.is_control]
    spliced = sum(isinstance(e, SplicedEncoding) for e in needles)
    assert spliced >= len(needles) // 2, (spliced, len(needles))


def test_an_added_token_across_a_space_never_gives_ids_that_are_not_the_text(
    shared_corpus, minilm_tokenizer
):
    """WordPiece with a non-special added token spanning a space (". the"): it is matched
    in the raw text across the pieces the pre-tokenizer splits, so sentences' and needles'
    own tokens are not the haystack's. Spliced, 40 of 80 such haystacks carried ids that
    were not their text's; now they are built from text."""
    tokenizer = with_added(minilm_tokenizer, AddedToken(". the", special=False))
    groups = builtin_needle_set().select(["dietary-01", "location-02", "hobby-03"])
    for haystack, carried in haystacks_and_encodings(shared_corpus, tokenizer, groups, (128,)):
        check_exact(haystack, carried, tokenizer)
    assert not tokenizer.splits_at_spaces


@pytest.mark.slow
@pytest.mark.parametrize("which", [*EVERY_TOKENIZER, *VARIANTS])
def test_the_full_default_grid_builds_on_every_family(
    request, shared_corpus, sentence_cache, which
):
    """The default grid (every length, position, arm and order) builds with no needle
    refused; a seeded sample of its haystacks is checked against the tokenizer itself."""
    from pytest_niah.config.niah import NiahConfig

    grid = NiahConfig(model="grid-only")
    tokenizer = request.getfixturevalue(which)
    needle_set = builtin_needle_set()
    builder = HaystackBuilder(
        shared_corpus, needle_set, tokenizer, grid.seed, sentence_cache, splice=True
    )
    blocks = builder.blocks(needle_set.groups, grid.lengths, grid.positions, grid.arms, grid.orders)
    built = [
        pair for block in blocks for pair in zip(block.haystacks, block.encodings, strict=True)
    ]
    per_length = 1 + grid.positions * len(grid.arms) * len(grid.orders)
    assert len(built) == len(needle_set.groups) * len(grid.lengths) * per_length
    assert {h.length for h, _ in built} == set(grid.lengths)
    for haystack, carried in random.Random(which).sample(built, 60):
        check_exact(haystack, carried, tokenizer)
