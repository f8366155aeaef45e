"""The largest batch the endpoint accepts, and its latency and tokens/s.

Batches of short texts double up to ``--max-batch`` until one is refused (its status and
message kept) or answered with another number of vectors. Latency is timed at three lengths
within the window (an eighth, half, all of it), one request at a time and ``--concurrency``
at a time, each request one text of its own (a server's cache answers nothing twice).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from pytest_niah.audit.endpoint import SERIAL_REQUESTS, Endpoint, Refusal, latency_lengths
from pytest_niah.embed.server_noise import FIXED_TEXTS
from pytest_niah.embed.window_probe import one_token_words
from pytest_niah.errors import EmbedderError
from pytest_niah.inputs.packaged_corpus import packaged_corpus


@dataclass(frozen=True)
class BatchLimit:
    """The largest batch accepted.

    Attributes:
        largest: The most texts one request carried and was answered.
        tried: The largest batch tried (``--max-batch`` unless a smaller one failed).
        status: The status of the refusal that stopped the doubling (``None``: none).
        message: What the server said, or why the answer was wrong ("": all accepted).
    """

    largest: int
    tried: int
    status: int | None = None
    message: str = ""


@dataclass(frozen=True)
class Latency:
    """One length at one concurrency.

    Attributes:
        tokens: Tokens of each text.
        concurrency: Requests in flight.
        requests: Requests sent.
        p50: The median seconds of a request.
        p95: The 95th percentile.
        tokens_per_s: Tokens sent over the seconds the requests took together.
        refused: The refusal's status and message, if the server refused this length.
    """

    tokens: int
    concurrency: int
    requests: int
    p50: float | None
    p95: float | None
    tokens_per_s: float | None
    refused: str = ""


def largest_batch(endpoint: Endpoint, limit: int) -> BatchLimit:
    """Double the batch (1, 2, 4 ... ``limit``) until the server refuses one."""
    sizes = [1]
    while sizes[-1] < limit:
        sizes.append(min(limit, 2 * sizes[-1]))
    texts = [f"{FIXED_TEXTS[i % len(FIXED_TEXTS)]} ({i})" for i in range(limit)]
    largest = 0
    for size in sizes:
        try:
            endpoint.embed(texts[:size])
        except Refusal as refusal:
            return BatchLimit(largest, size, refusal.status, refusal.message)
        except EmbedderError as exc:
            return BatchLimit(largest, size, None, exc.problem)
        largest = size
    return BatchLimit(largest, sizes[-1])


def measure_latency(endpoint: Endpoint, window: int, concurrency: int) -> list[Latency]:
    """Latency and tokens/s at the three lengths, at concurrency 1 and ``concurrency``."""
    lengths = latency_lengths(window)
    runs = SERIAL_REQUESTS + 2 * concurrency
    words = one_token_words(endpoint.embedder.tokenizer, packaged_corpus(), window + runs)
    rows = []
    for length in lengths:
        texts = [" ".join(words[i : i + length]) for i in range(runs)]
        rows.append(_timed(endpoint, texts[:SERIAL_REQUESTS], 1, length))
        rows.append(_timed(endpoint, texts[SERIAL_REQUESTS:], concurrency, length))
    return rows


def _timed(endpoint: Endpoint, texts: list[str], concurrency: int, length: int) -> Latency:
    started = time.perf_counter()
    try:
        with ThreadPoolExecutor(concurrency, thread_name_prefix="niah-audit") as pool:
            seconds = [s for _, s in pool.map(lambda text: endpoint.embed([text]), texts)]
    except Refusal as refusal:
        refused = f"HTTP {refusal.status}: {refusal.message}"
        return Latency(length, concurrency, len(texts), None, None, None, refused)
    wall = time.perf_counter() - started
    tokens = sum(endpoint.tokens(texts))
    return Latency(
        tokens=length,
        concurrency=concurrency,
        requests=len(texts),
        p50=float(np.percentile(seconds, 50)),
        p95=float(np.percentile(seconds, 95)),
        tokens_per_s=tokens / wall if wall > 0 else None,
    )
