"""The model's speed: per length from a run's embedding phase, and a fixed sample to time.

:func:`speed_record` turns what the encoder timed into the results' speed record;
:func:`speed_sample` gives the haystacks ``--niah-speed`` times for one length (the same
ones on every run of a config: haystacks are drawn from its seed), one batch of the run's
shape, so that a round embeds as many tokens as the run's batches do and its tokens/s is
the run's. :func:`reference_workload` is the fixed work each round is measured against,
timed beside it: the model's speed in its units is the same on a fast and a slow machine.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.batching import batch_texts
from pytest_niah.embed.protocol import Embedder
from pytest_niah.experiment.planning import block_inputs, start_planning
from pytest_niah.experiment.probe_step import probe_window
from pytest_niah.experiment.run_inputs import Inputs
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, Plan
from pytest_niah.results.speed_record import SpeedRecord, length_speed, request_latency

SPEED_MAX_ROUNDS = 200
"""The most timed rounds of one length (fast models on short haystacks)."""
REFERENCE_SIZE = 1 << 17
REFERENCE_REPEATS = 4
# Element-wise work on one core: matrix products spread over BLAS threads stall by hundreds
# of milliseconds on a loaded machine (measured: 0.8 ms or 309 ms), this does not.
REFERENCE = (
    f"{REFERENCE_REPEATS} rounds of tanh and sort of {REFERENCE_SIZE:,} float32 values "
    "(numpy, one core)"
)
"""What the reference workload does, as the speed test's extra_info names it."""


def speed_record(
    plan: Plan,
    lengths: Sequence[int],
    model_seconds: Mapping[str, float],
    request_seconds: Sequence[float] = (),
) -> SpeedRecord:
    """Per length, the haystack tokens the model embedded and the model time they took.

    Args:
        plan: The run's haystacks and the input keys that score each.
        lengths: The run's lengths.
        model_seconds: Input key -> model seconds, for the inputs the model embedded (those
            read from the embedding cache are absent, so they count neither way).
        request_seconds: Seconds of each request to a served model.
    """
    keys_by_length: dict[int, dict[str, None]] = {length: {} for length in lengths}
    seen: set[str] = set()
    for planned in plan.haystacks:
        for pieces in planned.pieces.values():
            for key in pieces:
                if key not in seen:  # an input shared by two lengths counts at the first
                    seen.add(key)
                    keys_by_length.setdefault(planned.haystack.length, {})[key] = None
    entries = []
    for length in lengths:
        keys = keys_by_length.get(length, {})
        embedded = [key for key in keys if key in model_seconds]
        entries.append(
            length_speed(
                length,
                inputs=len(keys),
                cached=len(keys) - len(embedded),
                tokens=sum(plan.tokens[key] for key in embedded),
                seconds=sum(model_seconds[key] for key in embedded),
            )
        )
    return SpeedRecord(lengths=entries, latency=request_latency(request_seconds))


def speed_sample(
    config: NiahConfig,
    embedder: Embedder,
    inputs: Inputs,
    cache: CachePolicy,
    length: int,
    size: int | None = None,
    *,
    token_budget: int,
) -> list[ModelInput]:
    """Whole haystacks of ``length``, as the model reads them: one batch of the run's shape.

    ``size`` haystacks, or (``None``) as many as one of the run's batches holds at this
    length under its ``token_budget`` (:func:`pytest_niah.experiment.budget`): a round
    then embeds what a batch of the run does, and their tokens/s agree. Blocks are built
    one at a time and only until the sample is full, so a long run's other lengths and
    groups are not built for it; the window probe reads its few texts through the cache.
    """
    narrow = config.replace(lengths=(length,), scoring=("whole",))
    measured = probe_window(narrow, embedder, inputs, cache)
    planning = start_planning(narrow, embedder, inputs, cache.sentence_counts, measured)
    needles: set[str] = set()
    sample: list[ModelInput] = []
    for block in planning.blocks:
        fresh = block_inputs(planning, block)
        needles.update(planning.plan.needles.values())
        sample.extend(i for i in fresh if i.kind == DOCUMENT and i.key not in needles)
        if sample and size is None:
            size = batch_texts(token_budget, config.batch_size, sample[0].tokens)
        if size is not None and len(sample) >= size:
            break
    return sample[:size]


def speed_rounds(warm_seconds: float, *, min_rounds: int, max_time: float) -> int:
    """Timed rounds after a warm-up round of ``warm_seconds``: ``max_time`` worth or more.

    At least ``min_rounds``: pytest-benchmark's ``--benchmark-min-rounds`` and
    ``--benchmark-max-time`` mean here what they mean for its own calibrated runs.
    """
    if warm_seconds <= 0:
        return SPEED_MAX_ROUNDS
    fits = int(max_time / warm_seconds)
    return max(min_rounds, min(SPEED_MAX_ROUNDS, fits))


def reference_workload() -> Callable[[], tuple[float, float]]:
    """The fixed work a speed round is measured against; a call returns (wall, CPU) seconds.

    The same arithmetic on every machine (seeded inputs): a runner twice as slow takes
    about twice as long on it as on the model, so the model's speed in reference units
    (tokens per reference workload) reads the same on both.
    """
    import time

    import numpy as np

    values = np.random.default_rng(0).standard_normal(REFERENCE_SIZE).astype(np.float32)

    def run() -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        x = values
        for _ in range(REFERENCE_REPEATS):
            x = np.sort(np.tanh(x * np.float32(1.01)))
        return time.perf_counter() - started, time.process_time() - cpu

    return run


def speed_info(
    model: str,
    length: int,
    sample: Sequence[ModelInput],
    model_rounds: Sequence[tuple[float, float]],
    reference_rounds: Sequence[tuple[float, float]],
    run_tokens_per_second: float | None,
) -> dict[str, Any]:
    """The speed test's ``extra_info``: what its timed rounds measured, and the run's figure.

    Wall-clock figures are what the run's own tokens/s measures; CPU figures (the process's
    CPU seconds, all its threads) are what other processes' load does not stretch, so the
    relative speed is taken in CPU time on both sides.

    Args:
        model: The model as configured.
        length: The haystack length timed.
        sample: The haystacks each round embedded.
        model_rounds: (wall, CPU) seconds of each timed round of the model.
        reference_rounds: (wall, CPU) seconds of the reference workload, before each round.
        run_tokens_per_second: The run's own tokens/s at ``length`` (``None``: not recorded).
    """
    tokens = sum(item.tokens for item in sample)
    walls, cpus = [w for w, _ in model_rounds], [c for _, c in model_rounds]
    rate, cpu_rate = _rate(tokens, statistics.median(walls)), _rate(tokens, statistics.median(cpus))
    reference_cpu = statistics.median(c for _, c in reference_rounds)
    return {
        "model": model,
        "length": length,
        "haystacks": len(sample),
        "tokens": tokens,
        "rounds": len(model_rounds),
        "tokens_per_second": rate,
        "best_tokens_per_second": _rate(tokens, min(walls)),
        "spread": round_spread(walls),
        "cpu_tokens_per_second": cpu_rate,
        "cpu_spread": round_spread(cpus),
        "reference": REFERENCE,
        "reference_seconds": statistics.median(w for w, _ in reference_rounds),
        "reference_cpu_seconds": reference_cpu,
        "relative_speed": cpu_rate * reference_cpu if cpu_rate is not None else None,
        "run_tokens_per_second": run_tokens_per_second,
    }


def _rate(tokens: int, seconds: float) -> float | None:
    return tokens / seconds if seconds > 0 else None


def round_spread(rounds: Sequence[float]) -> float | None:
    """Half the interquartile range of the rounds, relative to their median."""
    if len(rounds) < 4:
        return None
    q1, _, q3 = statistics.quantiles(rounds, n=4)
    median = statistics.median(rounds)
    return (q3 - q1) / 2 / median if median > 0 else None


@dataclass(frozen=True)
class SpeedChange:
    """This run's relative speed against a compared run's, under ``--niah-speed-fail``.

    Attributes:
        current: This run's ``relative_speed`` (tokens per reference workload, CPU time).
        compared: The compared run's, for the same model and length.
        allowance: The fall allowed, in percent of ``compared`` (``20.0`` for ``20%``).
    """

    current: float
    compared: float
    allowance: float

    @property
    def change(self) -> float:
        """The relative change: ``-0.25`` is 25% slower than the compared run."""
        return self.current / self.compared - 1

    @property
    def failed(self) -> bool:
        """Fell by more than the allowance; a fall of exactly the allowance passes."""
        return self.current / self.compared < 1 - self.allowance / 100

    def describe(self, run: str) -> str:
        """``relative_speed 3.1 vs 4.0 in run NAME: -22.5% (allowed: -20%)``."""
        return (
            f"relative_speed {self.current:,.4g} vs {self.compared:,.4g} in run {run}: "
            f"{self.change:+.1%} (allowed: -{self.allowance:g}%)"
        )


def compared_relative_speed(entry: Mapping[str, Any] | None, model: str, length: int) -> float:
    """The compared run's ``relative_speed`` for this model and length.

    Args:
        entry: The compared run's benchmark of the same test (``None``: it has none).
        model: The model this run times, as configured.
        length: The haystack length this run times.

    Raises:
        ValueError: why the entry has no figure to compare with (one clause).
    """
    if entry is None:
        raise ValueError("has no benchmark of this test")
    extra = entry.get("extra_info") or {}
    value = extra.get("relative_speed")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"has no relative_speed (found {value!r})")
    if extra.get("model") != model or extra.get("length") != length:
        raise ValueError(
            f"timed model {extra.get('model')!r} at length {extra.get('length')!r} under this "
            f"test's name, not {model!r} at {length}"
        )
    if extra.get("reference") != REFERENCE:
        raise ValueError("measured relative_speed against another reference workload")
    return float(value)
