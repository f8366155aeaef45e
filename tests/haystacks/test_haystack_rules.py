"""Rules of haystacks/ that the fresh mutation draw of #46.4 (seed 1954973815) found unchecked."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.haystacks.assembly import Assembler, BlockParts
from pytest_niah.haystacks.haystack import Block, Haystack, stable_key
from pytest_niah.haystacks.plan import PreparedBlock
from pytest_niah.haystacks.sentence_counts import _plausible
from pytest_niah.haystacks.splice import junctions_hold
from pytest_niah.haystacks.tokens import WordTokenizer


def test_no_needle_edges_to_check_hold(word_tokenizer):
    # Found (mutation seed 1954973815, splice.py:224 `return True` -> `return None`): with
    # no haystack there is no junction that could break: the splice holds (True, not None).
    assert junctions_hold(word_tokenizer, []) is True


@pytest.mark.parametrize(
    ("stored", "plausible"),
    [
        (np.array([3, 0, 12], dtype=np.int32), True),
        (np.array([-1, 5], dtype=np.int64), True),  # -1: a sentence not counted yet
        (np.array([-2, 5], dtype=np.int64), False),  # no count is below "unknown"
        (np.array([], dtype=np.int32), True),
        (np.array([1.0, 2.0]), False),  # not whole numbers
    ],
)
def test_stored_sentence_counts_are_whole_numbers_or_unknown(stored, plausible):
    # Found (mutation seed 1954973815, sentence_counts.py:108 `>= _UNKNOWN` -> `<`): valid
    # stored counts were thrown away and every sentence counted again (the same, slower).
    assert _plausible(stored, np.zeros(stored.shape, dtype=np.int32)) is plausible
    assert not _plausible(np.array([1, 2, 3]), np.zeros(2, dtype=np.int32))  # another book


@pytest.mark.parametrize("kind", [BlockParts, PreparedBlock, Block, Haystack, Assembler])
def test_a_blocks_parts_and_a_prepared_block_are_values_that_cannot_change(kind):
    # Found (mutation seed 1954973815, assembly.py:35 and plan.py:109 `frozen=True` ->
    # False): the threads that build blocks share these; a field set after the fact would
    # change a block that another thread is merging. (Seed 259527325, assembly.py:62: the
    # assembler is one per builder, shared by every thread that assembles.)
    assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    block = object.__new__(kind)
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.draw = 1


def test_a_stable_key_is_the_same_64_bit_number_in_every_process_and_version():
    """Haystacks are drawn from these keys: another number would draw other haystacks."""
    assert stable_key("dietary-01", 128, 3) == 5206754929591674196
    assert stable_key() == 1449310910991872227
    assert all(0 <= stable_key(n) < 2**64 for n in range(100))


def test_the_word_tokenizer_reads_a_word_in_any_case_as_one_32_bit_id():
    """The test tokenizer's ids: one per word or mark, case-blind, and fixed across runs."""
    (encoding,) = WordTokenizer().encode_batch(["The cat, the CAT."])
    assert encoding.ids == [2800107122, 3138554730, 2939987199, 2800107122, 3138554730, 2316478424]
    assert encoding.offsets == [(0, 3), (4, 7), (7, 8), (9, 12), (13, 16), (16, 17)]
    assert all(0 <= i < 2**32 for i in encoding.ids)


def test_the_word_encoding_maps_a_character_to_its_token_or_to_none():
    """Inside a token: its index; a space, before the first token, past the last, or any
    character of a text with no tokens at all: none."""
    # Found (mutation seed 1016273348, tokens.py:98): without the index check, a text with
    # no tokens read its last span (an IndexError) instead of answering none.
    (encoding,) = WordTokenizer().encode_batch([" The cat."])
    assert [encoding.char_to_token(c) for c in range(10)] == [None, 0, 0, 0, None, 1, 1, 1, 2, None]
    assert encoding.char_to_token(-1) is None
    (empty,) = WordTokenizer().encode_batch(["   "])
    assert len(empty) == 0
    assert [empty.char_to_token(c) for c in range(3)] == [None, None, None]


LEAKY_BUILD = """
from haystack_building import GROUPS
from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.tokens import WordTokenizer
from pytest_niah.inputs.corpus import Book, Corpus

word = GROUPS.group("location-02").audit_terms[0]
text = " ".join(f"Sentence {i} says {word} again." for i in range(400))
corpus = Corpus(name="leaky", books=(Book(name="leaky", text=text, source="-", sha256="0"),))
builder = HaystackBuilder(corpus, GROUPS, WordTokenizer(), 0)
try:
    list(builder.blocks(GROUPS.groups, (64,), 2, ("onehop",), ("default",)))
except HaystackError as exc:
    print(exc)
"""


def test_a_stream_that_can_draw_nothing_gives_up_rather_than_hang(tmp_path):
    # Found (mutation seed 1954973815, snippet_streams.py:148 the raise deleted): the build
    # drew forever, and the mutant only timed out. Every sentence names a key word of the
    # group: the stream must give up, naming the corpus, within seconds. In a process of its
    # own, so that a stream that never gives up fails this test instead of hanging the
    # suite (the builder's threads would keep a thread of the test's alive).
    here = Path(__file__).parent
    path = os.pathsep.join([str(here), str(here.parents[1]), os.environ.get("PYTHONPATH", "")])
    try:
        done = subprocess.run(
            [sys.executable, "-c", LEAKY_BUILD],
            capture_output=True,
            text=True,
            timeout=90,
            env={**os.environ, "PYTHONPATH": path},
            cwd=tmp_path,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the stream never gave up on a corpus it can draw nothing from")
    assert done.returncode == 0, done.stderr
    assert "corpus 'leaky'" in done.stdout and "rejected by" in done.stdout
