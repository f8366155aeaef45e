"""The plan's rules: input kinds, an input cut to the window, chunks and where the needle is
(on the word tokenizer, whose tokens are plain to see)."""

from __future__ import annotations

import pytest

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.plan import Plan, base_kind, is_multi, make_input, multi_kind
from pytest_niah.inputs.needles import builtin_needle_set


def test_token_vector_kinds_are_named_and_read_back():
    assert multi_kind("document") == "document-multi"
    assert is_multi("document-multi") is True and is_multi("document") is False
    assert base_kind("document-multi") == "document" and base_kind("query") == "query"


def test_an_input_past_the_window_keeps_the_text_of_the_tokens_read(word_tokenizer):
    text = "one two three four five"
    (encoding,) = word_tokenizer.encode_batch([text])
    cut = make_input("document", encoding, text, 3, keep_text=True)
    assert cut.ids.tolist() == encoding.ids[:3] and cut.text == "one two three"
    whole = make_input("document", encoding, text, None, keep_text=True)
    assert whole.tokens == 5 and whole.text == text
    assert make_input("document", encoding, text, 3, keep_text=False).text == ""


@pytest.fixture(scope="module")
def block(shared_corpus, word_tokenizer):
    (group,) = builtin_needle_set().select(["dietary-01"]).groups
    builder = HaystackBuilder(shared_corpus, builtin_needle_set(), word_tokenizer, 7)
    return builder.block(group, 128, 3, ("onehop",), ("default",))


def test_each_chunk_is_the_text_of_its_tokens(block, word_tokenizer):
    prepared = Plan(("chunk-max",), None, 32, keep_text=True).prepare(block)
    for inputs in prepared.inputs:
        chunks = inputs["chunk-max"]
        assert len(chunks) > 1
        for chunk in chunks:
            assert word_tokenizer.encode_batch([chunk.text])[0].ids == chunk.ids.tolist()


def test_only_needle_haystacks_say_where_in_its_chunk_the_needle_starts(block):
    prepared = Plan(("whole", "chunk-max"), None, 32, keep_text=False).prepare(block)
    rows = zip(block.haystacks, block.encodings, prepared.within, prepared.inputs, strict=True)
    for haystack, encoding, within, inputs in rows:
        if haystack.is_control:
            assert within == {}
            continue
        assert set(within) == {"chunk-max"}
        inside = within["chunk-max"]
        assert 0 <= inside < 32
        needle_id = encoding.ids[haystack.needle_offset]
        starts = [
            c for c in inputs["chunk-max"] if c.tokens > inside and c.ids[inside] == needle_id
        ]
        assert starts, haystack.id


def test_a_plan_read_back_from_its_json_is_the_plan_that_was_written(block):
    """A shard part's manifest carries the plan as JSON; the gate job measures with the plan
    read back, so every field a measurement reads comes back equal."""
    # Found (mutation seed 1016273348, plan.py:235): only whole shard runs read the plan
    # back; the fast tests never did.
    import json

    plan = Plan(("whole", "chunk-max"), 100, 32, keep_text=False)
    plan.add_block(block)
    back = Plan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert (back.scorings, back.window, back.chunk_tokens) == (("whole", "chunk-max"), 100, 32)
    assert back.haystacks == plan.haystacks and len(back.haystacks) == len(block.haystacks)
    assert back.needles == plan.needles and back.queries == plan.queries
    assert back.tokens == plan.tokens and back.placements == plan.placements
    assert back.multi == plan.multi
