"""How fast the model embedded each haystack length: a measurement beside the results.

Speed is recorded, never gated: it is no part of a run's identity (the results key), and
comparisons and gates read the cases, not these fields. Only model time counts: inputs
served from the embedding cache took none, so a length read wholly from the cache has no
speed (``tokens_per_second`` is ``null`` and ``note`` says why). Results reused from the
results cache keep the speed measured when they were computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

_FROZEN = ConfigDict(extra="forbid", strict=True, frozen=True)


class LengthSpeed(BaseModel):
    """The model's speed on the haystacks of one length.

    Attributes:
        length: The haystack length (tokens of the model's tokenizer).
        inputs: Haystack inputs of this length (chunks, for chunk scorings).
        cached: Those read from the embedding cache (no model time).
        tokens: Tokens the model read of the others (fewer than ``length`` each past the
            model's window).
        seconds: Model time spent on them (each batch's time shared by its inputs' tokens).
        tokens_per_second: ``tokens / seconds``; ``null`` when the model embedded none.
        note: Why there is no speed, or what it leaves out; ``null`` when nothing to say.
    """

    model_config = _FROZEN

    length: int
    inputs: int
    cached: int
    tokens: int
    seconds: float
    tokens_per_second: float | None
    note: str | None = None


class RequestLatency(BaseModel):
    """Seconds per request to a served model (``openai+URL#MODEL``) during the run.

    Attributes:
        requests: Requests answered (retries of one request count as one).
        p50_seconds: The median request's seconds.
        p95_seconds: The 95th percentile's seconds.
    """

    model_config = _FROZEN

    requests: int
    p50_seconds: float
    p95_seconds: float


class SpeedRecord(BaseModel):
    """The embedding phase's speed, per haystack length.

    Attributes:
        lengths: One entry per length of the run, shortest first.
        latency: Per-request latency of a served model; ``null`` for a local one, or when
            no request was sent (everything came from the cache).
    """

    model_config = _FROZEN

    lengths: list[LengthSpeed]
    latency: RequestLatency | None = None

    def at(self, length: int) -> LengthSpeed | None:
        """The entry of one length, if recorded."""
        return next((entry for entry in self.lengths if entry.length == length), None)


def length_speed(length: int, inputs: int, cached: int, tokens: int, seconds: float) -> LengthSpeed:
    """One length's entry from its counts; the note says what the speed leaves out."""
    embedded = inputs - cached
    rate = tokens / seconds if embedded and seconds > 0 else None
    if rate is not None and not math.isfinite(rate):
        rate = None
    note = None
    if inputs == 0:
        note = "no haystack inputs of this length were planned"
    elif rate is None:
        note = (
            f"all {inputs} haystack inputs of this length were read from the embedding cache: "
            "no model time to measure (run with --niah-no-cache, or --niah-speed)"
        )
    elif cached:
        note = f"{cached} of {inputs} inputs read from the cache; speed of the {embedded} embedded"
    return LengthSpeed(
        length=length,
        inputs=inputs,
        cached=cached,
        tokens=tokens,
        seconds=seconds,
        tokens_per_second=rate,
        note=note,
    )


def request_latency(seconds: Sequence[float]) -> RequestLatency | None:
    """p50 and p95 of request times (nearest rank); ``None`` when there were none."""
    if not seconds:
        return None
    ordered = sorted(seconds)

    def rank(share: float) -> float:
        return ordered[max(0, math.ceil(share * len(ordered)) - 1)]

    return RequestLatency(requests=len(ordered), p50_seconds=rank(0.5), p95_seconds=rank(0.95))
