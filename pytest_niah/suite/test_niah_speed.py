"""Speed tests (with ``--niah-speed``): one per length, timed by pytest-benchmark.

Each times the model on a fixed sample of haystacks of its length (the same on every run of
a config): one batch of the run's shape, straight through the model. The embedding cache is
bypassed and every round gets fresh copies of the inputs, so every round is model work
that grows with the tokens. pytest-benchmark's pedantic mode runs a warm-up round, then
``--benchmark-max-time`` worth of rounds (at least ``--benchmark-min-rounds``).

Before each round, outside its timing, a fixed reference workload is timed too. Both are
timed in wall-clock seconds (``tokens_per_second``: the run's own figure) and in the
process's CPU seconds, which another process's load on the machine does not stretch: the
model's tokens per reference workload in CPU time (``relative_speed`` in ``extra_info``)
is its speed in units of this machine's, comparable between a fast and a slow runner and
between a quiet and a loaded one. ``--benchmark-json``, ``--benchmark-save`` and
``--benchmark-compare-fail`` work as for any benchmark (``--benchmark-timer=time.process_time``
makes its statistics CPU time too). With ``--niah-speed-fail=PERCENT`` a speed test fails
when its relative speed fell by more than that versus the run ``--benchmark-compare``
loaded (:mod:`pytest_niah.plugin.speed_gate`); otherwise it never fails on speed.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from pytest_niah.experiment import budget
from pytest_niah.experiment.speed import reference_workload, speed_info, speed_rounds, speed_sample
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.plugin.session import NiahSession
from pytest_niah.plugin.speed_gate import gate_speed

pytestmark = pytest.mark.niah


def test_speed(
    niah_speed_length: tuple[str, int],
    niah_session: NiahSession,
    benchmark: Any,
    request: pytest.FixtureRequest,
) -> None:
    """Embed this length's sample of haystacks; tokens/s goes to ``benchmark.extra_info``."""
    label, length = niah_speed_length
    if niah_session.settings.from_shards:
        pytest.skip("the gate job of a sharded run loads no model: time a shard job instead")
    embedder = niah_session.embedder(label)
    config = niah_session.configs[label]
    inputs, cache = niah_session.inputs(label), niah_session.settings.cache
    tokens_per_batch = budget(config, embedder)  # the run's batches, as its Encoder forms them
    sample = speed_sample(config, embedder, inputs, cache, length, token_budget=tokens_per_batch)
    if not sample:
        pytest.fail(f"no haystack of {length} tokens to time for {label}", pytrace=False)
    reference = reference_workload()
    model_rounds: list[tuple[float, float]] = []  # (wall, CPU) seconds
    reference_rounds: list[tuple[float, float]] = []

    def fresh() -> tuple[tuple[list[ModelInput]], dict[str, Any]]:
        # Untimed: the reference workload under the same load as the round it precedes,
        # and new arrays, so nothing of the model's can answer from an earlier round.
        reference_rounds.append(reference())
        return ([dataclasses.replace(i, ids=i.ids.copy()) for i in sample],), {}

    def embed(items: list[ModelInput]) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        embedder.encode(items)
        model_rounds.append((time.perf_counter() - started, time.process_time() - cpu))

    embed(*fresh()[0])  # the warm-up round, which also sizes the run
    option = request.config.getoption
    rounds = speed_rounds(
        model_rounds[-1][0],
        min_rounds=int(option("benchmark_min_rounds", 5)),
        max_time=float(option("benchmark_max_time", 1.0)),
    )
    model_rounds.clear()
    reference_rounds.clear()
    # Timed here too: with --benchmark-disable the fixture runs once and keeps no stats.
    benchmark.pedantic(embed, setup=fresh, rounds=rounds, iterations=1)
    found = niah_session.stored_results(label)
    entry = found.speed.at(length) if found is not None and found.speed is not None else None
    run_rate = entry.tokens_per_second if entry is not None else None
    info = speed_info(config.model, length, sample, model_rounds, reference_rounds, run_rate)
    allowance = niah_session.settings.speed_fail
    failures = (
        []
        if allowance is None
        else gate_speed(request.config, request.node.nodeid, info, allowance)
    )
    benchmark.extra_info.update(info)
    niah_session.state.speed_tests[label, length] = info
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
