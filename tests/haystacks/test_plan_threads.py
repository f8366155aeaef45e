"""A block's model inputs are prepared on the thread that built it, then merged in order."""

from __future__ import annotations

import threading

import pytest

from pytest_niah.experiment.planning import Planning, block_inputs
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.plan import Plan
from pytest_niah.inputs.needles import builtin_needle_set

GROUPS = builtin_needle_set().select(["dietary-01", "location-02", "hobby-03"])
GRID = (GROUPS.groups, (128, 512), 3, ("onehop",), ("default", "inverted"), 2)


@pytest.mark.parametrize("window", [None, 200])
def test_inputs_prepared_on_the_building_threads_plan_as_blocks_planned_one_by_one(
    shared_corpus, minilm_tokenizer, window
):
    scorings = ("whole", "chunk-max")

    def plan() -> Plan:
        return Plan(scorings, window, 96, keep_text=True)

    inline, threaded = plan(), plan()
    builder = HaystackBuilder(shared_corpus, GROUPS, minilm_tokenizer, 5, threads=2)
    fresh_inline = [item for block in builder.blocks(*GRID) for item in inline.add_block(block)]
    threads: set[str] = set()

    def prepare(block):
        threads.add(threading.current_thread().name)
        return threaded.prepare(block)

    builder = HaystackBuilder(shared_corpus, GROUPS, minilm_tokenizer, 5, threads=2)
    fresh_threaded = [
        item
        for prepared in builder.each_block(prepare, *GRID)
        for item in threaded.add_block(prepared)
    ]
    assert threads and all(name.startswith("pytest-niah-build") for name in threads)
    assert threaded.to_dict() == inline.to_dict()
    assert [(i.key, i.kind, i.text, i.ids.tolist()) for i in fresh_threaded] == [
        (i.key, i.kind, i.text, i.ids.tolist()) for i in fresh_inline
    ]
    assert len(fresh_inline) > len(inline.haystacks)  # chunks and whole texts were planned


def test_a_prepared_block_adds_nothing_to_the_plan_until_merged(shared_corpus, minilm_tokenizer):
    builder = HaystackBuilder(shared_corpus, GROUPS, minilm_tokenizer, 5)
    block = next(iter(builder.blocks(*GRID)))
    plan = Plan(("whole",), None, 96, keep_text=False)
    prepared = plan.prepare(block)
    assert plan.tokens == {} and plan.haystacks == []
    fresh = plan.add_block(prepared)
    assert [p.haystack.id for p in plan.haystacks] == [h.id for h in block.haystacks]
    assert {i.key for i in fresh} == set(plan.tokens)
    assert all(p.haystack.text == "" for p in plan.haystacks)


class NoCalls:
    """A tokenizer that must not be called (planning a block's needles needs none)."""

    identity = "none"

    def encode_batch(self, texts):
        raise AssertionError(f"tokenizer called on {len(texts)} texts while planning")


def test_a_blocks_needles_are_planned_from_the_builders_own_tokens(shared_corpus, minilm_tokenizer):
    builder = HaystackBuilder(shared_corpus, GROUPS, minilm_tokenizer, 5)
    blocks = list(builder.blocks(*GRID))
    plan = Plan(("whole",), 100, 96, keep_text=True)
    planning = Planning(plan, builder, {}, [], iter(()), 100, NoCalls())
    for block in blocks:
        block_inputs(planning, plan.prepare(block))
    needles = {h.needle for b in blocks for h in b.haystacks if h.needle}
    assert set(plan.needles) == needles
    for block in blocks:
        for text, encoding in block.needles:
            (own,) = minilm_tokenizer.encode_batch([text])
            assert encoding.ids == own.ids
    # The same keys as needles tokenized on the planning thread, as before.
    again = Plan(("whole",), 100, 96, keep_text=True)
    texts = sorted(needles)
    again.add_texts("document", texts, minilm_tokenizer.encode_batch(texts), 100)
    assert again.needles == plan.needles
