"""The run's batches (embed/batching.py) and the encoder's use of them: one rule, any run."""

from __future__ import annotations

from pathlib import Path

import pytest
from embed_fakes import FakeEmbedder, make_inputs

from pytest_niah.embed.batching import MAX_BATCH, BatchFormer, batch_texts, form_batches
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.haystacks.plan import QUERY


def keys(batches) -> list[list[str]]:
    return [[item.key for item in batch] for batch in batches]


def test_a_batch_holds_one_kind_and_one_token_count_in_plan_order():
    docs = make_inputs(5, tokens=[8, 16])  # 8, 16, 8, 16, 8 tokens
    queries = make_inputs(2, start=10, tokens=8, kind=QUERY)
    mixed = [docs[0], queries[0], docs[1], docs[2], queries[1], docs[3], docs[4]]
    batches = list(form_batches(mixed, lambda tokens: 2))
    assert keys(batches) == keys(
        [[docs[0], docs[2]], [queries[0], queries[1]], [docs[1], docs[3]], [docs[4]]]
    )


def test_the_rest_of_each_group_comes_last_in_the_order_the_groups_began():
    former = BatchFormer(lambda tokens: 3)
    items = make_inputs(4, tokens=[8, 16])
    assert [former.add(item) for item in items] == [None] * 4
    assert keys(former.rest()) == keys([[items[0], items[2]], [items[1], items[3]]])
    assert former.rest() == []


def test_a_batch_is_full_at_exactly_its_size():
    former = BatchFormer(lambda tokens: 2)
    one, two, three = make_inputs(3)
    assert former.add(one) is None
    assert keys([former.add(two)]) == keys([[one, two]])
    assert former.add(three) is None


@pytest.mark.parametrize(
    ("budget", "size", "tokens", "texts"),
    [
        (0, 7, 100, 7),
        (1000, 7, 100, 10),
        (1000, 7, 999, 1),
        (1000, 7, 5000, 1),
        (10**9, 7, 1, 512),
        (1, 7, 100, 1),
        (100, 7, 1, 100),
    ],
)
def test_texts_per_batch(budget, size, tokens, texts):
    assert batch_texts(budget, size, tokens) == texts
    assert texts <= max(size, MAX_BATCH)


def test_a_batch_read_in_part_from_the_cache_is_embedded_whole(tmp_path: Path):
    # A cache holding some of a batch's inputs (another run's) must not change the company
    # the rest are embedded in: the model gets the whole batch, as a cold run gives it.
    items = make_inputs(4)
    with EmbeddingStore(tmp_path / "e.sqlite") as store:
        first = Encoder(FakeEmbedder(), store, budget=0, batch_size=4)
        first.submit(items[:1])
        first.finish()
        model = FakeEmbedder()
        again = Encoder(model, store, budget=0, batch_size=4)
        again.submit(items)
        again.finish()
    assert keys(model.batches) == keys([items])
    assert again.stats.read == 0 and again.stats.embedded == 4


def test_a_batch_wholly_in_the_cache_is_read_not_embedded(tmp_path: Path):
    items = make_inputs(4)
    with EmbeddingStore(tmp_path / "e.sqlite") as store:
        cold = Encoder(FakeEmbedder(), store, budget=0, batch_size=2)
        cold.submit(items[:2])
        cold.finish()
        model = FakeEmbedder()
        warm = Encoder(model, store, budget=0, batch_size=2)
        warm.submit(items)
        warm.finish()
    assert keys(model.batches) == keys([items[2:]])
    assert warm.stats.read == 2 and warm.stats.embedded == 2


def test_a_formed_batch_is_embedded_as_it_is():
    model = FakeEmbedder()
    encoder = Encoder(model, None, budget=0, batch_size=2)
    items = make_inputs(3)
    encoder.submit_batch(items)  # a shard job's batch: not formed again
    encoder.finish()
    assert keys(model.batches) == keys([items])
