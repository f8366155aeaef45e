"""The audited endpoint: the served model, its requests, and the tokens sent (bounded).

The served model is the one a run would use (:class:`~pytest_niah.embed.remote.RemoteEmbedder`:
the address, presets, tokenizer, window, retries and secrets of ``--niah-model=openai+...``).
The audit's own requests go through an :class:`~pytest_niah.embed.remote_http.EmbeddingsClient`
that keeps a refusal's status and message (what happens past the window, the largest batch).
Every request is charged to a :class:`Meter` whose limit is fixed before the first embedding
(:func:`token_bound`): the audit never sends more, and says how much it sent.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.embed.remote_address import api_key
from pytest_niah.embed.remote_http import EXCERPT_CHARS, EmbeddingsClient, Reply
from pytest_niah.embed.remote_response import response_vectors
from pytest_niah.embed.secrets import excerpt
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.haystacks.tokens import token_counts

# The run's options named in the served model's messages, and the audit's own.
_OPTION_NAMES = (
    ("--niah-model", "the address"),
    ("--niah-tokenizer", "--tokenizer"),
    ("--niah-max-seq-length", "--max-seq-length"),
    ("--niah-api-key-env", "--api-key-env"),
    ("--niah-remote-timeout", "--timeout"),
    ("--niah-remote-concurrency", "--concurrency"),
    ("--niah-batch-size", "--max-batch"),
)
# Requests of each length at concurrency 1 (at concurrency N: two per request thread).
SERIAL_REQUESTS = 4


@dataclass(frozen=True)
class AuditSettings:
    """What the command line asked for.

    Attributes:
        address: ``openai+http(s)://HOST:PORT/PATH#MODEL``.
        tokenizer: As ``--niah-tokenizer`` takes it (empty: the preset's).
        max_seq_length: The window to assume, special tokens included (``None``: the server's
            ``max_model_len``, the preset's, or the tokenizer folder's).
        api_key_env: The environment variable holding the API key.
        timeout: Seconds to wait for one response.
        concurrency: Requests in flight in the concurrent latency measurement.
        retries: Further tries of a request that failed in a way worth retrying.
        max_batch: The largest batch tried.
    """

    address: str
    tokenizer: str
    max_seq_length: int | None
    api_key_env: str
    timeout: float
    concurrency: int
    retries: int
    max_batch: int


@dataclass
class Meter:
    """Tokens and requests sent; refuses a request that would pass ``limit`` tokens."""

    limit: int = 0
    tokens: int = 0
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def charge(self, tokens: int, requests: int = 1) -> None:
        """Count a request of ``tokens`` tokens before it goes out."""
        with self.lock:
            if self.tokens + tokens > self.limit:
                raise EmbedderError(
                    f"the audit would send more than its bound of {self.limit:,} tokens",
                    "report this as a bug of pytest-niah: the bound is computed before the "
                    "first request",
                )
            self.tokens += tokens
            self.requests += requests


class Refusal(EmbedderError):
    """A request the server refused (4xx): its status and the start of its message."""

    def __init__(self, problem: str, hint: str, *, status: int = 0, message: str = "") -> None:
        super().__init__(problem, hint)
        self.status = status
        self.message = message


class AuditClient(EmbeddingsClient):
    """The served model's client, keeping what a refusal said."""

    def refused(self, reply: Reply, url: str) -> EmbedderError:
        """The run's error for a refusal, with the status and a short, key-free message."""
        base = super().refused(reply, url)
        return Refusal(
            base.problem, base.hint, status=reply.status, message=self.message(reply.body)
        )

    def message(self, body: bytes) -> str:
        """The refusal's own words (``error.message``, ``error``, ``detail``), key blanked."""
        text = body.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict):
                error = error.get("message")
            found = error if error is not None else data.get("detail", data.get("message"))
            if found is not None:
                text = found if isinstance(found, str) else json.dumps(found)
        return excerpt(text, api_key(self.api_key_env), EXCERPT_CHARS)


class AuditedEmbedder(RemoteEmbedder):
    """The served model as a run sees it, each of its requests charged to a meter."""

    meter = Meter()

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        """Charge the inputs' tokens, then embed them as a run would."""
        size = max(1, min(self.batch_size, math.ceil(len(inputs) / self.concurrency)))
        self.meter.charge(sum(item.tokens for item in inputs), math.ceil(len(inputs) / size))
        return super().encode(inputs)


@dataclass
class Endpoint:
    """The audited model, a client for the audit's own requests, and the meter."""

    embedder: AuditedEmbedder
    client: AuditClient
    meter: Meter

    def tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's tokens by the served model's tokenizer."""
        return token_counts(self.embedder.tokenizer, list(texts))

    def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, float]:
        """One request of ``texts`` as given (not cut): the vectors and the seconds it took."""
        self.meter.charge(sum(self.tokens(texts)))
        started = time.perf_counter()
        payload = {"model": self.embedder.remote.model, "input": list(texts)}
        body = self.client.call("POST", "embeddings", payload)
        seconds = time.perf_counter() - started
        rows = response_vectors(body, len(texts), self.client.bad)
        return np.asarray(rows, dtype=np.float64), seconds

    def close(self) -> None:
        """Stop the requests and release the threads."""
        self.client.stop()
        self.embedder.close()


def open_endpoint(settings: AuditSettings) -> Endpoint:
    """The endpoint of ``settings`` (nothing sent yet); a bad address or tokenizer is refused."""
    meter = Meter()
    embedder = AuditedEmbedder(
        settings.address,
        tokenizer=settings.tokenizer,
        max_seq_length=settings.max_seq_length,
        api_key_env=settings.api_key_env,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retries=settings.retries,
        batch_size=8,
    )
    embedder.meter = meter
    client = AuditClient(
        embedder.remote,
        what=embedder.what,
        api_key_env=settings.api_key_env,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retries=settings.retries,
        backoff=embedder.backoff,
        known_window=lambda: embedder.max_seq_length,
    )
    return Endpoint(embedder, client, meter)


def token_bound(window: int, settings: AuditSettings, short: int) -> int:
    """The most tokens the audit sends to a model reading ``window`` document tokens.

    Args:
        window: Document tokens the model declares it reads.
        settings: The batch limit and concurrency.
        short: Tokens of the longest fixed (short) text.
    """
    fixed = 16 * short  # the fixed batch alone twice and the noise check's 7 texts
    probe = window * (4 + 2 * math.ceil(math.log2(max(window, 2))))
    past = 2 * (window + past_extra(window))
    batches = short * (2 * settings.max_batch)
    latency = (SERIAL_REQUESTS + 2 * settings.concurrency) * sum(latency_lengths(window))
    needles = 6 * sum(needle_lengths(window)) + 8 * short * 4
    return fixed + probe + past + batches + latency + needles


def past_extra(window: int) -> int:
    """Tokens sent past the window to see what the server does with them."""
    return max(8, window // 4)


def latency_lengths(window: int) -> tuple[int, int, int]:
    """The three text lengths timed: an eighth, half and all of the window."""
    return max(1, window // 8), max(1, window // 2), window


def needle_lengths(window: int) -> tuple[int, int, int]:
    """The three haystack lengths of the needle check: a quarter, half, seven eighths."""
    return max(1, window // 4), max(1, window // 2), max(1, window * 7 // 8)


def in_audit_terms(text: str) -> str:
    """``text`` with the run's option names replaced by the audit's."""
    for run_option, audit_option in _OPTION_NAMES:
        text = text.replace(run_option, audit_option)
    return text
