"""Rules of experiment/speed.py that the speed tests' runs do not pin down: counts and spread."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from pytest_niah.experiment.speed import (
    REFERENCE,
    SPEED_MAX_ROUNDS,
    reference_workload,
    round_spread,
    speed_info,
    speed_record,
    speed_rounds,
    speed_sample,
)


def _planned(length: int, *keys: str) -> SimpleNamespace:
    return SimpleNamespace(haystack=SimpleNamespace(length=length), pieces={"whole": list(keys)})


def test_inputs_read_from_the_cache_are_counted_as_cached_not_timed():
    plan = SimpleNamespace(
        haystacks=[_planned(128, "a", "b"), _planned(128, "b", "c"), _planned(256, "d", "e")],
        tokens={"a": 100, "b": 120, "c": 128, "d": 250, "e": 256},
    )
    # "b" and "e" came from the embedding cache: no model time.
    record = speed_record(plan, (128, 256), {"a": 0.5, "c": 0.5, "d": 1.0})
    short, long = record.lengths
    assert (short.inputs, short.cached) == (3, 1)  # "b" once, though two haystacks share it
    assert (long.inputs, long.cached) == (2, 1)
    assert short.tokens_per_second == pytest.approx((100 + 128) / 1.0)
    assert long.tokens_per_second == pytest.approx(250 / 1.0)


def test_the_round_spread_is_half_the_interquartile_range_over_the_median():
    rounds = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    # statistics.quantiles (exclusive): q1 2, q3 6, median 4.
    assert round_spread(rounds) == pytest.approx((6.0 - 2.0) / 2 / 4.0)
    assert round_spread([2.0, 2.0, 2.0, 2.0]) == 0.0
    assert round_spread([1.0, 2.0, 3.0]) is None  # too few rounds for quartiles


def test_timed_rounds_fill_the_time_allowed_between_the_least_and_the_most():
    # Found (mutation, speed.py:111-114): rounds = the max time over one warm round, at
    # least --benchmark-min-rounds, at most SPEED_MAX_ROUNDS (200); a round timed at 0 s
    # (a clock too coarse) gets the most.
    assert SPEED_MAX_ROUNDS == 200
    assert speed_rounds(0.1, min_rounds=5, max_time=1.0) == 10
    assert speed_rounds(0.5, min_rounds=5, max_time=1.0) == 5
    assert speed_rounds(0.001, min_rounds=5, max_time=1.0) == 200
    assert speed_rounds(0.0, min_rounds=5, max_time=1.0) == 200


def test_the_speed_figures_are_medians_of_the_rounds_and_relative_in_cpu_time():
    # Found (mutation, speed.py:165-183): wall figures from wall times, CPU figures from CPU
    # times, relative speed = CPU tokens/s x the reference's CPU seconds.
    sample = [SimpleNamespace(tokens=100), SimpleNamespace(tokens=300)]
    model = [(2.0, 1.0), (4.0, 2.0), (1.0, 4.0), (8.0, 8.0), (5.0, 0.5)]
    reference = [(0.3, 0.2), (0.5, 0.4), (0.6, 0.1)]
    info = speed_info("m", 128, sample, model, reference, 99.0)
    assert (info["model"], info["length"], info["haystacks"], info["tokens"]) == ("m", 128, 2, 400)
    assert info["rounds"] == 5 and info["run_tokens_per_second"] == 99.0
    assert info["tokens_per_second"] == 400 / 4.0  # median wall
    assert info["best_tokens_per_second"] == 400 / 1.0  # fastest wall round
    assert info["cpu_tokens_per_second"] == 400 / 2.0  # median CPU
    assert info["spread"] == round_spread([2.0, 4.0, 1.0, 8.0, 5.0])
    assert info["cpu_spread"] == round_spread([1.0, 2.0, 4.0, 8.0, 0.5])
    assert (info["reference_seconds"], info["reference_cpu_seconds"]) == (0.5, 0.2)
    assert info["relative_speed"] == pytest.approx(400 / 2.0 * 0.2)
    assert info["reference"] == REFERENCE
    # Rounds timed at 0 s of CPU (a coarse clock): no rate and no relative speed, never a
    # division by zero.
    zero = speed_info("m", 128, sample, [(1.0, 0.0)] * 4, reference, None)
    assert zero["cpu_tokens_per_second"] is None and zero["relative_speed"] is None


def test_the_reference_workload_is_the_one_its_name_says_and_times_itself():
    # Found (mutation, speed.py:27-28 and :140): saved runs name the workload they were
    # measured against; a run compares relative speeds only under the same name.
    assert REFERENCE == ("4 rounds of tanh and sort of 131,072 float32 values (numpy, one core)")
    run = reference_workload()
    started, cpu_started = time.perf_counter(), time.process_time()
    wall, cpu = run()
    assert 0 < wall <= time.perf_counter() - started
    assert 0 <= cpu <= time.process_time() - cpu_started


def test_rounds_of_zero_seconds_have_no_spread():
    # Found (mutation, speed.py:202 `median > 0` -> `>= 0`): a clock too coarse for the
    # rounds times them at 0 s: no spread, never a division by zero.
    assert round_spread([0.0, 0.0, 0.0, 0.0]) is None


def test_a_sample_of_a_given_size_is_that_many_of_the_haystacks_a_batch_would_hold():
    # Found (mutation, speed.py:105 `if sample and size is None` -> `or`): a size given is
    # kept; only without one is it what one of the run's batches holds.
    from pytest_niah.config.cache_policy import CachePolicy
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.embed.st_backend import SentenceTransformerEmbedder
    from pytest_niah.experiment import load_inputs

    config = NiahConfig(model="packaged-static", lengths=(128,), groups=("dietary-01",))
    inputs, cache = load_inputs(config), CachePolicy(None, False)
    model = SentenceTransformerEmbedder("packaged-static", device="cpu")
    try:
        batch = speed_sample(config, model, inputs, cache, 128, token_budget=0)
        two = speed_sample(config, model, inputs, cache, 128, 2, token_budget=0)
    finally:
        model.close()
    assert len(batch) == config.batch_size > 2
    assert [i.key for i in two] == [i.key for i in batch[:2]]
