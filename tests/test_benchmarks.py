"""Benchmarks (pytest-benchmark): embedding throughput per length, haystack building, tables.

pytest-benchmark turns itself off under xdist (CI runs ``-n 2``) and with
``--benchmark-disable``: the fixture then calls the function once and keeps no statistics.
These tests time every call themselves, so ``extra_info`` (tokens per second) is filled
either way, and they check what the benchmarked function returned in every mode.

    python -m pytest tests/test_benchmarks.py                       # timed, 3 rounds each
    python -m pytest tests/test_benchmarks.py -m "not slow"         # no model
    python -m pytest tests/test_benchmarks.py --benchmark-disable   # one call each, checks only
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pytest_niah.embed.embedders import PACKAGED_MINILM, SentenceTransformerEmbedder
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.inputs.needles import builtin_needle_set
from pytest_niah.measure.analysis import summarize
from pytest_niah.measure.records import CaseResult, NegativeScores

LENGTHS = (128, 512, 2048)
ROUNDS = 3
SEED = 42


class Clock:
    """Wraps a function and keeps the wall seconds of every call."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.durations: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.durations.append(time.perf_counter() - start)

    @property
    def mean(self) -> float:
        return sum(self.durations) / len(self.durations)


def record(benchmark: Any, clock: Clock, **rates: float) -> None:
    """Per-second rates from the mean call time, and how many calls that mean covers."""
    benchmark.extra_info["timed_calls"] = len(clock.durations)
    benchmark.extra_info["mean_s"] = round(clock.mean, 6)
    for name, amount in rates.items():
        benchmark.extra_info[f"{name}_per_s"] = round(amount / clock.mean, 1)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu")


@pytest.fixture(scope="module")
def haystack_texts(shared_corpus, minilm) -> Callable[[int], list[str]]:
    """A few haystacks per length (2 groups x (1 control + 3 needle positions)), built once."""
    built: dict[int, list[str]] = {}
    needle_set = builtin_needle_set().select(["dietary-01", "location-01"])

    def texts(length: int) -> list[str]:
        if length not in built:
            builder = HaystackBuilder(shared_corpus, needle_set, minilm.token_spans, SEED)
            haystacks = builder.build((length,), 3, ("onehop",), ("default",), 1)
            built[length] = [h.text for h in haystacks]
        return built[length]

    return texts


@pytest.mark.slow
@pytest.mark.benchmark(group="encode-documents")
@pytest.mark.parametrize("length", LENGTHS)
def test_encode_documents_throughput(benchmark, minilm, haystack_texts, length):
    texts = haystack_texts(length)
    assert len(texts) == 8
    clock = Clock(minilm.encode_documents)
    vectors = benchmark.pedantic(clock, args=(texts,), rounds=ROUNDS, iterations=1)
    assert vectors.shape == (len(texts), 384)
    assert np.isfinite(vectors).all()
    read = min(length, minilm.max_tokens)  # MiniLM reads 254 document tokens, then truncates
    benchmark.extra_info.update(length=length, texts=len(texts), tokens_read_per_text=read)
    record(
        benchmark,
        clock,
        texts=len(texts),
        haystack_tokens=length * len(texts),
        model_tokens=read * len(texts),
    )


@pytest.mark.benchmark(group="build-haystacks")
def test_build_haystacks(benchmark, shared_corpus, minilm_spans):
    """Token-exact assembly: one group, 512 and 2048 tokens, 4 positions, both orders."""
    needle_set = builtin_needle_set().select(["dietary-01"])
    lengths = (512, 2048)
    for book in shared_corpus.books:
        _ = book.sentences  # split once, outside the timed calls

    def build() -> list[Any]:
        # A new builder per call: its per-sentence token counts start empty, as in a run.
        builder = HaystackBuilder(shared_corpus, needle_set, minilm_spans, SEED)
        return builder.build(lengths, 4, ("onehop",), ("default", "inverted"), 1)

    clock = Clock(build)
    haystacks = benchmark.pedantic(clock, rounds=ROUNDS, iterations=1)
    assert len(haystacks) == len(lengths) * (1 + 4 * 2)
    counts = [len(spans) for spans in minilm_spans([h.text for h in haystacks])]
    assert counts == [h.length for h in haystacks]
    record(benchmark, clock, haystacks=len(haystacks), tokens=sum(counts))


def synthetic_cases(
    arms: int = 2, groups: int = 28, lengths: int = 7, positions: int = 10
) -> tuple[list[CaseResult], list[NegativeScores]]:
    """A results-sized case list: every arm x group x length x order x position, seeded."""
    rng = np.random.default_rng(SEED)
    categories = ("dietary", "medical", "language", "location", "profession", "hobby", "vehicle")
    cases, negatives = [], []
    for a in range(arms):
        arm = f"arm{a}"
        for g in range(groups):
            group_id = f"{categories[g % len(categories)]}-{g:02d}"
            for length in (128 << i for i in range(lengths)):
                negatives.append(
                    NegativeScores(
                        arm, "whole", group_id, length, tuple(rng.normal(0.2, 0.05, groups))
                    )
                )
                control = float(rng.normal(0.2, 0.05))
                for order in ("default", "inverted"):
                    for p in range(positions):
                        cos_qh = float(rng.normal(0.25, 0.05))
                        cos_qn = float(rng.uniform(0.3, 0.7))
                        cases.append(
                            CaseResult(
                                id=f"{group_id}-{arm}-{order}-L{length}-p{p:02d}",
                                group_id=group_id,
                                category=group_id.split("-")[0],
                                arm=arm,
                                scoring="whole",
                                order=order,
                                length=length,
                                position=p,
                                relative_position=p / (positions - 1),
                                name="Name",
                                needle_offset=p * length // positions,
                                needle_tokens=12,
                                truncated=p * length // positions >= 254,
                                cos_qh=cos_qh,
                                cos_qn=cos_qn,
                                normalized=cos_qh / cos_qn,
                                control_score=control,
                                found=cos_qh > control,
                            )
                        )
    return cases, negatives


@pytest.mark.benchmark(group="metric-tables")
def test_summarize_large_case_list(benchmark):
    cases, negatives = synthetic_cases()
    assert len(cases) == 2 * 28 * 7 * 2 * 10
    clock = Clock(summarize)
    rows = benchmark.pedantic(clock, args=(cases, negatives), rounds=ROUNDS, iterations=1)
    # Per arm and length: the length row, 7 categories, 2 orders, 10 positions.
    assert len(rows) == 2 * 7 * (1 + 7 + 2 + 10)
    per_length = [r for r in rows if r.by == "length"]
    assert all(r.n_cases == 28 * 2 * 10 and r.n_questions == 28 for r in per_length)
    assert all(0.0 <= r.auc <= 1.0 for r in per_length)
    record(benchmark, clock, cases=len(cases), rows=len(rows))
