"""A model behind an OpenAI-compatible server: ``--niah-model=openai+http://HOST:PORT/v1#MODEL``.

vLLM, text-embeddings-inference, infinity, Ollama and hosted APIs serve ``POST /embeddings``.

The server gets text: each input's text, already cut by the engine to the tokens the model
reads, with the prompt in front. Haystack lengths are counted by ``--niah-tokenizer``, the
served model's own tokenizer (a ``tokenizer.json``, or a tiktoken encoding:
:mod:`pytest_niah.embed.tiktoken_tokenizer`), which is required: pytest-niah never guesses it.
A hosted model with a preset (:mod:`pytest_niah.embed.remote_presets`, e.g.
text-embedding-3-small) brings its tokenizer and window.

The window (the server's limit, special tokens included, like sentence-transformers'
``max_seq_length`` and vLLM's ``max_model_len``) is ``--niah-max-seq-length`` if given, else
what the server reports (``max_model_len`` in ``GET /models``, as vLLM does, else
``max_input_length`` in text-embeddings-inference's ``/info``:
:mod:`pytest_niah.embed.server_report`), else the
``max_seq_length`` of ``sentence_bert_config.json`` beside the tokenizer; else the run is
refused. Every input is cut to the window minus the tokenizer's special tokens and the prompt,
so the server reads exactly what a local sentence-transformers model would
(:mod:`pytest_niah.embed.remote_window`).

Requests go out ``--niah-remote-concurrency`` at a time; 408, 429, 5xx, timeouts and broken
connections are retried with exponential backoff and jitter (``Retry-After`` honoured).
The API key is read from the environment variable ``--niah-api-key-env`` names, sent as
``Authorization: Bearer`` and kept out of every identity, result, message and log: an address
holding a secret is refused, and a server's answers have the key blanked in every form
(:mod:`pytest_niah.embed.secrets`). A redirect of an embeddings request is not followed.
Only the standard library speaks HTTP (:mod:`pytest_niah.embed.remote_http`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cached_property
from typing import Any

import numpy as np

from pytest_niah.config.options import default
from pytest_niah.embed.fast_tokenizer import HaystackTokenizer
from pytest_niah.embed.identity import ModelIdentity, model_identity
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.remote_address import api_key, parse_remote
from pytest_niah.embed.remote_http import EmbeddingsClient
from pytest_niah.embed.remote_response import response_vectors
from pytest_niah.embed.remote_window import RemoteWindow
from pytest_niah.embed.server_fingerprint import ServerFingerprint
from pytest_niah.embed.server_report import ServerReport
from pytest_niah.embed.server_watch import EVERY_REQUESTS, EVERY_SECONDS
from pytest_niah.embed.tiktoken_tokenizer import TiktokenTokenizer
from pytest_niah.haystacks.plan import QUERY, ModelInput

WEIGHTS_NOTE = (
    "remote model: weights cannot be hashed; the identity is the endpoint's model name and "
    "what it reports"
)


class RemoteEmbedder:
    """A served model, spoken to over the OpenAI embeddings API.

    Args:
        name: ``openai+http(s)://HOST:PORT/PATH#MODEL``.
        tokenizer: The served model's tokenizer (``--niah-tokenizer``); empty uses the
            model's preset's.
        max_seq_length: The window, special tokens included; ``None`` asks the server, then
            the tokenizer folder.
        query_prompt: Text put before every question.
        doc_prompt: Text put before every document.
        api_key_env: The environment variable holding the API key.
        concurrency: Most requests in flight.
        timeout: Seconds to wait for one response.
        batch_size: Most texts per request.
        retries: Further tries of a request that failed in a way worth retrying.
        backoff: The first wait between tries, in seconds; it doubles each time (with jitter).
    """

    reads_text = True
    fits_on_documents = False
    # How often the run checks that the server did not change (embed.server_watch).
    check_every, check_seconds = EVERY_REQUESTS, EVERY_SECONDS

    def __init__(
        self,
        name: str,
        *,
        tokenizer: str,
        max_seq_length: int | None = None,
        query_prompt: str = "",
        doc_prompt: str = "",
        api_key_env: str = default("api_key_env"),
        concurrency: int = default("remote_concurrency"),
        timeout: float = default("remote_timeout"),
        batch_size: int = default("batch_size"),
        retries: int = 5,
        backoff: float = 1.0,
    ) -> None:
        self.name = name
        self.remote = parse_remote(name, key=api_key(api_key_env))
        self._reading = RemoteWindow(
            name,
            what=self.what,
            model=self.remote.model,
            tokenizer=tokenizer,
            requested=max_seq_length,
            reported=lambda: self._report.window(),
        )
        self.preset, self.tokenizer_spec = self._reading.preset, self._reading.tokenizer_spec
        self.query_prompt = query_prompt
        self.doc_prompt = doc_prompt
        self.api_key_env = api_key_env
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.batch_size = max(1, int(batch_size))
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.notes: list[str] = [WEIGHTS_NOTE]
        if self.preset is not None:
            self.notes.append(self.preset.note(self.remote.model))
        # Seconds of each answered request, in order (the run's latency p50/p95).
        self.request_seconds: list[float] = []
        # The server's measured answers and their key (None: not measured yet).
        self.answers, self.fingerprint = None, None  # type: str | None, ServerFingerprint | None
        self._pinned: tuple[str, ModelIdentity] | None = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._client = EmbeddingsClient(
            self.remote,
            what=self.what,
            api_key_env=api_key_env,
            concurrency=self.concurrency,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            known_window=self._reading.known,
        )
        self._report = ServerReport(self._client, self.remote.model)

    def __repr__(self) -> str:
        return f"RemoteEmbedder({self.name!r})"

    # -- what is served ----------------------------------------------------------------------

    @property
    def what(self) -> str:
        """The model and endpoint, for messages."""
        return f"model {self.remote.model!r} at {self.remote.endpoint}"

    @cached_property
    def _server_model(self) -> dict[str, Any]:
        """What the server says it serves: its ``/models`` entry, else an embedding's ``model``."""
        reported = self._report.listed()
        if reported is None:
            body = self._client.call(
                "POST", "embeddings", {"model": self.remote.model, "input": ["niah"]}
            )
            self._rows(body, 1)
            model = body.get("model") if isinstance(body, Mapping) else None
            reported = {"id": self._client.redact(model) if isinstance(model, str) else None}
        return reported

    @property
    def identity(self) -> ModelIdentity:
        """The endpoint's identity, with its measured answers once they are pinned.

        Until :meth:`pin_answers`, what the endpoint reports only (enough to name the
        model); every cache key is taken after it (see :mod:`.server_fingerprint`).
        """
        if self.answers is None:
            return self.served_identity
        if self._pinned is None or self._pinned[0] != self.answers:
            base = self.served_identity.parts
            source = {**base["source"], "answers": self.answers}
            self._pinned = (self.answers, model_identity(source, base["settings"], versions=False))
        return self._pinned[1]

    def pin_answers(self, key: str, fingerprint: ServerFingerprint) -> None:
        """Make the key of this run's server fingerprint part of the identity."""
        self.answers, self.fingerprint = key, fingerprint

    @cached_property
    def served_identity(self) -> ModelIdentity:
        """Endpoint, model name, what the server reports, tokenizer and settings; no key."""
        source = {
            "kind": "remote",
            "endpoint": self.remote.endpoint,
            "model": self.remote.model,
            "server_model": self._server_model,
            "server_info": self._report.info,  # text-embeddings-inference's /info
            "tokenizer": self.tokenizer.identity,
            "weights": "cannot be hashed (remote)",
        }
        settings = {
            "max_seq_length": self.max_seq_length,
            "query_prompt": self.query_prompt,
            "doc_prompt": self.doc_prompt,
        }
        return model_identity(source, settings, versions=False)

    # -- tokenizer and window (embed.remote_window) ------------------------------------------

    @property
    def tokenizer(self) -> HaystackTokenizer | TiktokenTokenizer:
        """The served model's tokenizer (``--niah-tokenizer``), truncation and padding off."""
        return self._reading.tokenizer

    @property
    def max_seq_length(self) -> int:
        """The window in tokens, special tokens included."""
        return self._reading.window[0]

    @cached_property
    def windows(self) -> Windows:
        """The window minus the tokenizer's special tokens and the prompt's."""
        prompts = {QUERY: self.query_prompt, "document": self.doc_prompt}
        windows, note = self._reading.windows(prompts)
        self.notes.append(note)
        return windows

    # -- embedding ---------------------------------------------------------------------------

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        """Embed inputs of one kind: requests of at most ``batch_size`` texts, several at once."""
        if not inputs:
            return np.zeros((0, 0), dtype=np.float32)
        prompt = self.query_prompt if inputs[0].kind == QUERY else self.doc_prompt
        texts = [prompt + item.text for item in inputs]
        size = max(1, min(self.batch_size, math.ceil(len(texts) / self.concurrency)))
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="niah-remote")
        futures: list[Future[np.ndarray]] = [self._pool.submit(self._embed, p) for p in parts]
        try:
            return np.concatenate([future.result() for future in futures])
        finally:
            for future in futures:
                future.cancel()

    def answer(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        """Embed inputs of one kind in one request of their own (the server checks')."""
        prompt = self.query_prompt if inputs[0].kind == QUERY else self.doc_prompt
        return self._embed([prompt + item.text for item in inputs])

    def _embed(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        body = self._client.call("POST", "embeddings", {"model": self.remote.model, "input": texts})
        self.request_seconds.append(time.perf_counter() - started)  # retries included
        return self._rows(body, len(texts))

    def _rows(self, body: Any, expected: int) -> np.ndarray:
        """The response's vectors in input order, every one checked, of the run's one width."""
        matrix = response_vectors(body, expected, self._client.bad)
        with self._lock:
            if self._dim is None:
                self._dim = int(matrix.shape[1])
            elif matrix.shape[1] != self._dim:
                raise self._client.bad(
                    f"returned {matrix.shape[1]}-dimensional embeddings after "
                    f"{self._dim}-dimensional ones",
                    "make sure one model serves every request (a load balancer over several "
                    "models, or a model swapped mid-run), then run again",
                )
        return matrix

    def close(self) -> None:
        """Stop retrying and release the request threads; closing twice is fine."""
        self._client.stop()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
