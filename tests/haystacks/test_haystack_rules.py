"""Rules of haystacks/ that the fresh mutation draw of #46.4 (seed 1954973815) found unchecked."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
from haystack_building import GROUPS

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.assembly import BlockParts
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.plan import PreparedBlock
from pytest_niah.haystacks.sentence_counts import _plausible
from pytest_niah.haystacks.splice import junctions_hold
from pytest_niah.inputs.corpus import Book, Corpus


def test_no_needle_edges_to_check_hold(word_tokenizer):
    # Found (mutation, splice.py:224 `return True` -> `return None`): with no haystack there
    # is no junction that could break, so the splice holds (True, not a falsy None).
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
    # Found (mutation, sentence_counts.py:108 `>= _UNKNOWN` -> `<`): valid stored counts
    # were thrown away and every sentence counted again (the same numbers, slower).
    assert _plausible(stored, np.zeros(stored.shape, dtype=np.int32)) is plausible
    assert not _plausible(np.array([1, 2, 3]), np.zeros(2, dtype=np.int32))  # another book


@pytest.mark.parametrize("kind", [BlockParts, PreparedBlock])
def test_a_blocks_parts_and_a_prepared_block_are_values_that_cannot_change(kind):
    # Found (mutation, assembly.py:35 and plan.py:109 `frozen=True` -> False): the threads
    # that build blocks share these; a field set after the fact would change a block that
    # another thread is merging.
    assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    block = object.__new__(kind)
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.draw = 1


def test_a_stream_that_can_draw_nothing_gives_up_rather_than_hang(word_tokenizer):
    # Found (mutation seed 1954973815, snippet_streams.py:148 the raise deleted): the run
    # drew forever, and the mutant only timed out. Every sentence names a key word of the
    # group: the stream must give up, naming the corpus, within seconds (here: in a thread,
    # so that a stream that never gives up fails this test instead of hanging the suite).
    word = GROUPS.group("location-02").audit_terms[0]
    text = " ".join(f"Sentence {i} says {word} again." for i in range(400))
    corpus = Corpus(name="leaky", books=(Book(name="leaky", text=text, source="-", sha256="0"),))
    builder = HaystackBuilder(corpus, GROUPS, word_tokenizer, 0)
    raised: list[BaseException] = []

    def build() -> None:
        try:
            list(builder.blocks(GROUPS.groups, (64,), 2, ("onehop",), ("default",)))
        except BaseException as exc:  # the thread hands it to the test
            raised.append(exc)

    worker = threading.Thread(target=build, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the stream never gave up on a corpus it can draw nothing from"
    assert len(raised) == 1 and isinstance(raised[0], HaystackError), raised
    assert "leaky" in str(raised[0]) and "rejected by" in str(raised[0])
