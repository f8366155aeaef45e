"""The encoder: even batches under a token budget, the cache first, every batch written at once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from embed_fakes import DIM, FakeEmbedder, fake_vector, make_inputs
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.batching import MAX_BATCH, form_batches
from pytest_niah.embed.runner import EmbeddingStats, Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.vector_table import VectorTable
from pytest_niah.errors import EmbedderError, EmbeddingError
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput


@pytest.fixture
def store(tmp_path: Path):
    with EmbeddingStore(tmp_path / CACHE_FILE) as opened:
        yield opened


def run(
    fake: FakeEmbedder,
    items: list[ModelInput],
    store: EmbeddingStore | None = None,
    *,
    budget: int = 0,
    batch_size: int = 10,
    chunks: int = 1,
) -> tuple[Encoder, VectorTable]:
    """Submit ``items`` in ``chunks`` calls, then finish."""
    encoder = Encoder(fake, store, budget=budget, batch_size=batch_size)
    step = max(1, -(-len(items) // chunks))
    for start in range(0, len(items), step):
        encoder.submit(items[start : start + step])
    return encoder, encoder.finish()


def vectors_of(table: VectorTable, items: list[ModelInput]) -> np.ndarray:
    return np.asarray(table.matrix)[table.rows([i.key for i in items])]


def expected(items: list[ModelInput]) -> np.ndarray:
    return np.stack([fake_vector(i.key) for i in items])


# -- batching --------------------------------------------------------------------------------

lengths_st = st.lists(st.integers(min_value=1, max_value=600), min_size=1, max_size=120)
kinds_st = st.lists(st.sampled_from([DOCUMENT, QUERY]), min_size=1, max_size=120)


@given(lengths_st, kinds_st, st.integers(min_value=1, max_value=20_000), st.integers(1, 4))
def test_batches_hold_one_kind_and_one_length_within_the_budget(lengths, kinds, budget, chunks):
    items = [
        make_inputs(1, start=i, tokens=length, kind=kinds[i % len(kinds)])[0]
        for i, length in enumerate(lengths)
    ]
    fake = FakeEmbedder()
    encoder, table = run(fake, items, budget=budget, chunks=chunks)
    sizes: Counter[tuple[str, int]] = Counter()
    for batch in fake.batches:
        assert len({(i.kind, i.tokens) for i in batch}) == 1, "one kind and length per batch"
        tokens = batch[0].tokens
        limit = max(1, min(MAX_BATCH, budget // tokens))
        assert len(batch) <= limit
        assert len(batch) == 1 or len(batch) * tokens <= budget
        sizes[(batch[0].kind, tokens)] += 1
    # Greedy: a bucket is cut only when full, so it makes as few batches as the limit allows.
    bucket = Counter((i.kind, i.tokens) for i in items)
    for key, count in bucket.items():
        limit = max(1, min(MAX_BATCH, budget // key[1]))
        assert sizes[key] == -(-count // limit)
    # Every input embedded once, and its own vector in the table.
    assert sorted(fake.seen) == sorted(i.key for i in items)
    assert np.array_equal(vectors_of(table, items), expected(items))
    assert encoder.stats.embedded == len(items)
    assert encoder.stats.tokens == sum(lengths)


def test_a_full_batch_is_embedded_as_soon_as_it_is_submitted():
    fake = FakeEmbedder()
    encoder = Encoder(fake, None, budget=80, batch_size=1)  # 10 inputs of 8 tokens a batch
    encoder.submit(make_inputs(9))
    assert fake.batches == []
    encoder.submit(make_inputs(1, start=9))
    assert [len(b) for b in fake.batches] == [10]
    encoder.submit(make_inputs(3, start=10))
    encoder.finish()
    assert [len(b) for b in fake.batches] == [10, 3]


def test_no_budget_uses_the_batch_size_and_the_batch_is_capped():
    fake = FakeEmbedder()
    run(fake, make_inputs(25), budget=0, batch_size=10)
    assert [len(b) for b in fake.batches] == [10, 10, 5]
    fake = FakeEmbedder()
    run(fake, make_inputs(MAX_BATCH + 3, tokens=1), budget=10**9)
    assert [len(b) for b in fake.batches] == [MAX_BATCH, 3]
    fake = FakeEmbedder()
    run(fake, make_inputs(3, tokens=500), budget=100)  # longer than the budget: one at a time
    assert [len(b) for b in fake.batches] == [1, 1, 1]


def test_repeated_inputs_are_embedded_once():
    items = make_inputs(6)
    fake = FakeEmbedder()
    encoder, table = run(fake, [*items, *items[:4], *items], batch_size=4, chunks=3)
    assert sorted(fake.seen) == sorted(i.key for i in items)
    assert encoder.stats.embedded == 6 and len(table.index) == 6
    assert np.array_equal(vectors_of(table, items), expected(items))


def test_stats_count_tokens_and_time():
    encoder, _ = run(FakeEmbedder(delay=0.01), make_inputs(4, tokens=[3, 5]), batch_size=2)
    assert encoder.stats == EmbeddingStats(
        embedded=4, read=0, dropped=0, tokens=16, seconds=encoder.stats.seconds
    )
    assert encoder.stats.seconds >= 0.02  # two batches


# -- the cache -------------------------------------------------------------------------------


def test_a_warm_store_means_nothing_is_embedded(store: EmbeddingStore):
    items = [*make_inputs(30, tokens=[4, 9]), *make_inputs(5, start=100, kind=QUERY)]
    cold_fake = FakeEmbedder()
    cold, cold_table = run(cold_fake, items, store, batch_size=7)
    assert cold.stats.embedded == 35 and cold.stats.read == 0
    digest = cold_fake.identity.digest
    assert store.count(f"{digest}:document") == 30 and store.count(f"{digest}:query") == 5

    warm_fake = FakeEmbedder()
    warm, warm_table = run(warm_fake, items, store, batch_size=7, chunks=5)
    assert warm_fake.batches == []
    assert (warm.stats.embedded, warm.stats.read, warm.stats.dropped) == (0, 35, 0)
    assert vectors_of(warm_table, items).tobytes() == vectors_of(cold_table, items).tobytes()


def test_a_partly_warm_store_reads_whole_batches_and_embeds_the_rest_whole(
    store: EmbeddingStore,
):
    # A batch the cache holds only in part is embedded whole (#42.6): each input's vector is
    # the one its own batch gives, as in a cold run.
    run(FakeEmbedder(), make_inputs(100, tokens=[5, 6, 7]), store)
    fake = FakeEmbedder()
    items = make_inputs(150, tokens=[5, 6, 7])
    encoder, table = run(fake, items, store, batch_size=7, chunks=4)
    cached = {i.key for i in items[:100]}
    batches = list(form_batches(items, lambda tokens: 7))
    cold = [b for b in batches if not all(i.key in cached for i in b)]
    assert sorted(fake.seen) == sorted(i.key for b in cold for i in b)
    assert [len(b) for b in fake.batches] == [len(b) for b in cold]
    assert encoder.stats.read == 150 - sum(len(b) for b in cold) > 0
    assert np.array_equal(vectors_of(table, items), expected(items))


def test_another_identity_misses(store: EmbeddingStore):
    run(FakeEmbedder("v1"), make_inputs(5), store)
    other, _ = run(FakeEmbedder("v2"), make_inputs(5), store)
    assert other.stats.embedded == 5 and store.count() == 10


def test_each_batch_is_written_as_soon_as_it_is_embedded(store: EmbeddingStore):
    fake = FakeEmbedder(fail_on=3)
    with pytest.raises(EmbedderError) as info:
        run(fake, make_inputs(100), store, batch_size=10)
    # The model's own failure becomes one error naming the model, the cause and the fix.
    message = str(info.value)
    assert "model 'fake' failed while embedding 10 document input(s)" in message
    assert "RuntimeError" in message and "kept in the cache" in message
    assert "--niah-token-budget" in message  # an out-of-memory failure: smaller batches
    assert isinstance(info.value.__cause__, RuntimeError)
    assert store.count() == 20
    resumed = FakeEmbedder()
    encoder, _ = run(resumed, make_inputs(100), store, batch_size=10)
    assert (encoder.stats.embedded, encoder.stats.read) == (80, 20)


def test_non_finite_rows_are_returned_but_not_stored(store: EmbeddingStore):
    items = make_inputs(3)
    items[1] = ModelInput(items[1].key, items[1].kind, items[1].ids, "nan row")
    _, table = run(FakeEmbedder(nan_texts="nan"), items, store)
    rows = vectors_of(table, items)
    assert np.isnan(rows[1]).all() and np.isfinite(rows[[0, 2]]).all()
    assert store.count() == 2
    again, _ = run(FakeEmbedder(nan_texts="nan"), items, store)
    assert again.stats.embedded == 3  # the NaN row's batch is tried again, whole


class SparseFake(FakeEmbedder):
    """Sparse rows from an embedder that does not fit on documents."""

    def encode(self, inputs):
        return sp.csr_matrix(super().encode(inputs))


def test_sparse_rows_are_kept_but_not_stored(store: EmbeddingStore):
    items = make_inputs(5)
    encoder, table = run(SparseFake(), items, store, batch_size=2)
    assert sp.issparse(table.matrix) and table.matrix.shape == (5, DIM)
    assert np.array_equal(
        table.matrix[table.rows([i.key for i in items])].toarray(), expected(items)
    )
    assert store.count() == 0 and encoder.stats.embedded == 5


# -- what a model returns --------------------------------------------------------------------


def test_the_wrong_number_of_rows_is_an_embedding_error():
    with pytest.raises(EmbeddingError) as info:
        run(FakeEmbedder(short_on=2), make_inputs(6), batch_size=3)
    message = str(info.value)
    assert "'fake' returned embeddings of shape (2, 16) for 3 texts" in message
    assert "one row per text" in message and "Fix:" in message


def test_a_changed_dimension_is_an_embedding_error(store: EmbeddingStore):
    with pytest.raises(EmbeddingError) as info:
        run(FakeEmbedder(dim_on=2), make_inputs(6), store, batch_size=3)
    message = str(info.value)
    assert "returned 17-dimensional embeddings after 16-dimensional ones" in message
    assert "truncate_dim" in message
    assert store.count() == 3  # the rows of the other dimension were never written


def test_an_empty_run_has_an_empty_table():
    encoder, table = run(FakeEmbedder(), [])
    assert table.matrix.shape == (0, 0) and encoder.stats == EmbeddingStats()
    assert table.rows([]).shape == (0,)


def test_a_model_that_raises_is_one_error_pointing_at_its_kwargs():
    class Refusing(FakeEmbedder):
        def encode(self, inputs):
            raise ValueError("task 'x' is unknown to this model")

    with pytest.raises(EmbedderError) as info:
        run(Refusing(), make_inputs(4), batch_size=2)
    message = str(info.value)
    assert "ValueError: task 'x' is unknown to this model" in message
    assert "--niah-encode-kwargs" in message and "kept in the cache" not in message
