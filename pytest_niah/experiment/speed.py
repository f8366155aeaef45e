"""The model's speed: per length from a run's embedding phase, and a fixed sample to time.

:func:`speed_record` turns what the encoder timed into the results' speed record;
:func:`speed_sample` gives the haystacks ``--niah-speed`` times for one length (the same
ones on every run of a config: haystacks are drawn from its seed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.protocol import Embedder
from pytest_niah.experiment.planning import Inputs, block_inputs, probe_window, start_planning
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, Plan
from pytest_niah.results.speed_record import SpeedRecord, length_speed, request_latency

SAMPLE_HAYSTACKS = 8
"""Haystacks ``--niah-speed`` times per length: enough to fill a batch, few enough for 8K."""


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
    size: int = SAMPLE_HAYSTACKS,
) -> list[ModelInput]:
    """Up to ``size`` whole haystacks of ``length``, as the model reads them.

    Blocks are built one at a time and only until the sample is full, so a long run's
    other lengths and groups are not built for it; the window probe reads its few texts
    through the cache.
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
        if len(sample) >= size:
            break
    return sample[:size]
