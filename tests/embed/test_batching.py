from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.embed.batching import token_budget_batches

counts_st = st.lists(st.integers(min_value=0, max_value=5000), max_size=300)
budget_st = st.integers(min_value=1, max_value=20000)
max_batch_st = st.integers(min_value=1, max_value=64)


@given(counts_st, budget_st, max_batch_st)
def test_every_index_appears_exactly_once(counts, budget, max_batch):
    batches = token_budget_batches(counts, budget=budget, max_batch=max_batch)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(counts)))
    assert all(batches), "no empty batch"


@given(counts_st, budget_st, max_batch_st)
def test_batches_respect_the_padded_budget_and_size(counts, budget, max_batch):
    for batch in token_budget_batches(counts, budget=budget, max_batch=max_batch):
        assert len(batch) <= max_batch
        if len(batch) > 1:
            assert len(batch) * max(counts[i] for i in batch) <= budget


@given(counts_st, budget_st, max_batch_st)
def test_lengths_never_increase_and_ties_keep_index_order(counts, budget, max_batch):
    flat = [i for b in token_budget_batches(counts, budget=budget, max_batch=max_batch) for i in b]
    keys = [(-counts[i], i) for i in flat]
    assert keys == sorted(keys)


@given(counts_st, budget_st, max_batch_st)
def test_batching_is_deterministic(counts, budget, max_batch):
    first = token_budget_batches(counts, budget=budget, max_batch=max_batch)
    assert first == token_budget_batches(list(counts), budget=budget, max_batch=max_batch)


@given(counts_st, budget_st, max_batch_st)
def test_packing_is_greedy(counts, budget, max_batch):
    # Each batch is closed only because the next text would not fit.
    batches = token_budget_batches(counts, budget=budget, max_batch=max_batch)
    for batch, following in itertools.pairwise(batches):
        longest = counts[batch[0]]
        assert len(batch) == max_batch or (len(batch) + 1) * longest > budget
        assert counts[following[0]] <= longest


def test_a_small_example():
    counts = [10, 600, 12, 600, 5, 300]
    assert token_budget_batches(counts, budget=1200) == [[1, 3], [5, 2, 0, 4]]
    assert token_budget_batches(counts, budget=1200, max_batch=1) == [
        [i] for i in (1, 3, 5, 2, 0, 4)
    ]
    assert token_budget_batches([], budget=10) == []
    assert token_budget_batches([50], budget=10) == [[0]]


@pytest.mark.parametrize(
    ("budget", "max_batch", "counts"), [(0, 4, [1]), (4, 0, [1]), (4, 4, [-1])]
)
def test_bad_arguments_are_refused(budget, max_batch, counts):
    with pytest.raises(ValueError):
        token_budget_batches(counts, budget=budget, max_batch=max_batch)


def mixed_texts() -> list[str]:
    words = [
        "the",
        "harbour",
        "keeper",
        "counted",
        "whales",
        "while",
        "bread",
        "rose",
        "in",
        "the",
        "quiet",
        "orchard",
    ]
    short = [f"Sentence {i}: {' '.join(words[i % 5 : i % 5 + 4])}." for i in range(22)]
    long = [" ".join(words[(i + j) % len(words)] for j in range(600)) for i in range(8)]
    texts = [*short, *long]
    # Interleave so input order differs from length order.
    return [texts[(i * 7) % len(texts)] for i in range(len(texts))]


def test_token_budget_encoding_matches_fixed_batches_in_input_order():
    from pytest_niah.embed.embedders import PACKAGED_MINILM, SentenceTransformerEmbedder

    texts = mixed_texts()
    assert len(set(texts)) == 30
    calls: list[tuple[int, int]] = []
    fixed = SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu", batch_size=16)
    budget = SentenceTransformerEmbedder(
        PACKAGED_MINILM, device="cpu", token_budget=4096, progress=lambda *a: calls.append(a)
    )
    assert max(len(s) for s in budget.token_spans(texts)) >= 600
    expected = fixed.encode_documents(texts)
    got = budget.encode_documents(texts)
    assert got.dtype == np.float32 and got.shape == expected.shape == (30, 384)
    assert np.allclose(got, expected, atol=1e-5)
    assert np.allclose(budget.encode_queries(texts[:3]), fixed.encode_queries(texts[:3]), atol=1e-5)

    # 8 texts at the 256-token window: 16 per 4096-token batch at most; several batches.
    documents = calls[: len(calls) - 1]
    assert len(documents) >= 2
    assert [c[0] for c in documents] == sorted(c[0] for c in documents)
    assert documents[-1][0] == 30
    assert 8 * 256 <= documents[-1][1] <= 30 * 256
    assert calls[-1][0] == 3
    assert budget.encode_documents([]).shape == (0, 0)


def test_token_budget_must_be_positive():
    from pytest_niah.embed.embedders import (
        PACKAGED_MINILM,
        EmbedderError,
        SentenceTransformerEmbedder,
    )

    with pytest.raises(EmbedderError, match="token_budget"):
        SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu", token_budget=0)
