"""One audit of an endpoint, step by step, within a token bound fixed before it starts."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_niah.audit.deployment import Fingerprint, fingerprint_of
from pytest_niah.audit.determinism import Determinism, Vectors, measure_determinism
from pytest_niah.audit.endpoint import AuditSettings, open_endpoint, token_bound
from pytest_niah.audit.needle_check import NeedleRow, needle_check
from pytest_niah.audit.past_window import WindowFinding, measure_windows
from pytest_niah.audit.throughput import BatchLimit, Latency, largest_batch, measure_latency
from pytest_niah.embed.server_noise import FIXED_TEXTS
from pytest_niah.embed.window_probe import falls_short

_T = TypeVar("_T")


@dataclass(frozen=True)
class Audit:
    """What the audit found.

    Attributes:
        endpoint: The API root (no query string, no key).
        model: The model name asked for.
        tokenizer: The tokenizer as given (or the preset's).
        window: The declared and measured window, and what happens past it.
        determinism: The same request twice, other batch-mates, a run's verdict.
        vectors: Dimension, length, input dependence.
        batch: The largest batch accepted.
        latency: Latency and tokens/s per length and concurrency.
        needles: The needle check per length.
        fingerprint: The deployment's fingerprint.
        tokens: Tokens sent.
        requests: Requests sent.
        bound: The most tokens the audit could have sent.
        seconds: How long the audit took.
        steps: Seconds of each step.
    """

    endpoint: str
    model: str
    tokenizer: str
    window: WindowFinding
    determinism: Determinism
    vectors: Vectors
    batch: BatchLimit
    latency: list[Latency]
    needles: list[NeedleRow]
    fingerprint: Fingerprint
    tokens: int
    requests: int
    bound: int
    seconds: float
    steps: dict[str, float]


def run_audit(settings: AuditSettings) -> Audit:
    """Audit the endpoint of ``settings``.

    Raises:
        ConfigError: a bad address, tokenizer or window (before anything is embedded).
        EmbedderError: the server cannot be reached or answers what is not an embedding.
    """
    started = time.perf_counter()
    endpoint = open_endpoint(settings)
    try:
        embedder = endpoint.embedder
        document = embedder.windows.document or embedder.max_seq_length
        endpoint.meter.limit = token_bound(document, settings, max(endpoint.tokens(FIXED_TEXTS)))
        clock = _Clock()
        determinism, vectors, fixed = clock.step("determinism", measure_determinism, endpoint)
        window = clock.step("window", measure_windows, endpoint, document, determinism.pair or 0.0)
        batch = clock.step("batch", largest_batch, endpoint, settings.max_batch)
        latency = clock.step("latency", measure_latency, endpoint, document, settings.concurrency)
        reads = document
        if window.measured is not None and falls_short(document, window.measured):
            reads = window.measured
        needles = clock.step("needles", needle_check, endpoint, reads)
        fingerprint = fingerprint_of(
            endpoint=embedder.remote.endpoint,
            model=embedder.remote.model,
            server_model=dict(embedder.served_identity.parts["source"]["server_model"]),
            tokenizer=embedder.tokenizer.identity,
            declared=embedder.max_seq_length,
            measured=window.measured,
            dim=vectors.dim,
            repeat=determinism.repeat,
            vectors=fixed,
        )
    finally:
        endpoint.close()
    return Audit(
        endpoint=embedder.remote.endpoint,
        model=embedder.remote.model,
        tokenizer=embedder.tokenizer_spec,
        window=window,
        determinism=determinism,
        vectors=vectors,
        batch=batch,
        latency=latency,
        needles=needles,
        fingerprint=fingerprint,
        tokens=endpoint.meter.tokens,
        requests=endpoint.meter.requests,
        bound=endpoint.meter.limit,
        seconds=time.perf_counter() - started,
        steps=clock.seconds,
    )


class _Clock:
    """Seconds of each step."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def step(self, name: str, work: Callable[..., _T], *args: Any) -> _T:
        started = time.perf_counter()
        try:
            return work(*args)
        finally:
            self.seconds[name] = round(time.perf_counter() - started, 3)
