"""Speed tests (with ``--niah-speed``): one per length, timed by pytest-benchmark.

Each times the model on a fixed sample of haystacks of its length (the same on every run of
a config), straight through the model: the embedding cache is bypassed, so every round is
model time. ``--benchmark-json``, ``--benchmark-save`` and ``--benchmark-compare-fail``
then work as for any benchmark; tokens/s is in each benchmark's ``extra_info``. A speed
test never fails on speed itself: that is ``--benchmark-compare-fail``'s job.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

from pytest_niah.experiment.speed import speed_sample
from pytest_niah.plugin.session import NiahSession

pytestmark = pytest.mark.niah


def test_speed(
    niah_speed_length: tuple[str, int], niah_session: NiahSession, benchmark: Any
) -> None:
    """Embed this length's sample of haystacks; tokens/s goes to ``benchmark.extra_info``."""
    label, length = niah_speed_length
    if niah_session.from_shards:
        pytest.skip("the gate job of a sharded run loads no model: time a shard job instead")
    embedder = niah_session.embedder(label)
    config = niah_session.configs[label]
    sample = speed_sample(config, embedder, niah_session.inputs(label), niah_session.cache, length)
    if not sample:
        pytest.fail(f"no haystack of {length} tokens to time for {label}", pytrace=False)
    tokens = sum(item.tokens for item in sample)
    rounds: list[float] = []

    def embed() -> None:
        started = time.perf_counter()
        embedder.encode(sample)
        rounds.append(time.perf_counter() - started)

    # Timed here too: with --benchmark-disable the fixture runs once and keeps no stats.
    benchmark(embed)
    seconds = statistics.median(rounds)
    benchmark.extra_info.update(
        {
            "model": config.model,
            "length": length,
            "haystacks": len(sample),
            "tokens": tokens,
            "tokens_per_second": tokens / seconds if seconds > 0 else None,
        }
    )
