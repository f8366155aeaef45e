"""A minimal OpenAI-compatible embeddings server for the tests, with faults to switch on.

It serves a sentence-transformers model (the packaged MiniLM in the tests) on 127.0.0.1:
``POST /v1/embeddings`` ({"model", "input": [texts]} -> {"data": [{"index", "embedding"}],
"model"}) and ``GET /v1/models``, the two routes vLLM, text-embeddings-inference, infinity
and Ollama share. It counts requests and the most in flight at once, records the
Authorization headers it was sent, and misbehaves on demand (:class:`Faults`).

No installable server fits the tests: infinity-emb pins numpy<2, sentence-transformers<4 and
transformers<=5.0, which would downgrade this project's own dependencies; vLLM and
text-embeddings-inference need a GPU build or a Rust binary, not a wheel.

In a test::

    server = EmbeddingServer(model, names=("minilm",)).start()
    server.faults.rate_limit = 2
    ...
    server.stop()

From a shell (faults set by ``POST /_faults`` with a JSON object of :class:`Faults` fields)::

    python tests/embed/openai_server.py --model-dir DIR --name minilm --port 8000
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if str(Path(__file__).parent) not in sys.path:  # loaded by its path (tests/plugin), or run
    sys.path.append(str(Path(__file__).parent))
from served_variants import other_model, rounded


@dataclass
class Faults:
    """What the server does wrong. Counted faults hit the next K embeddings requests.

    Attributes:
        rate_limit: Answer the next K requests with 429 and ``Retry-After: retry_after``.
        retry_after: The Retry-After header of a 429 (``None``: no header).
        errors: Answer the next K requests with 500.
        slow: Wait ``delay`` seconds before answering the next K requests.
        delay: How long a slow answer waits.
        hold: Every embeddings request takes at least this long (to see concurrency).
        wrong_dim_after: After this many good answers, send one dimension fewer.
        truncate: Leave the last embedding out of every answer.
        duplicate: Send index 0 twice (and no index 1).
        nan: Put a NaN in every answer.
        garbage: Answer 200 with a body that is not JSON.
        reverse: Send the rows in reverse order (valid: each carries its index).
        refuse: Answer every request with this status, echoing the Authorization header.
        models_route: ``GET /v1/models`` answers (else 404).
        max_model_len: Report this window in ``GET /v1/models`` (as vLLM does).
        redirect: Send ``GET /v1/models`` there (307, the same path on that origin).
        redirect_posts: Send every embeddings request there (307, the same path).
        refuse_body: With ``refuse``, answer with this body instead (e.g. the key echoed in
            another form).
        window: Read only the first N tokens of each text, saying nothing (a gateway or
            vLLM's ``truncate_prompt_tokens`` cutting inputs silently).
        booleans: Send every vector as JSON booleans (``true`` where the value is positive).
        redirect_posts_status: The status of a ``redirect_posts`` answer (302: urllib would
            follow it as a GET).
        noise: Add N(0, noise) to every component of every vector, fresh on every call (GPU
            kernels that sum in another order each time).
        random: Answer a random vector per text and call, whatever the text.
        flip_sign: Negate every vector of every other embeddings request.
        batch_jitter: Move every vector by this fraction of its length in a direction set by
            the whole request's texts: the same request repeats exactly, other batch-mates
            move it (as bfloat16 rounding does with padding).
        dtype: ``"bfloat16"`` or ``"float16"``: round every vector to that precision (a
            deployment restarted with ``--dtype``); with ``batch_jitter`` of about 2e-3, a
            bfloat16 deployment.
        other_model_after: After this many embeddings requests, answer as another model of
            the same dimension (the vectors turned by a fixed rotation).
        spared: Texts the other model still answers as the first one (a server that
            answers the fixed fingerprint texts from the real model only).
        info: Answer ``GET /info`` with this object (text-embeddings-inference's route).
        listed: Fields added to every ``GET /v1/models`` entry (infinity's ``backend``...).
    """

    rate_limit: int = 0
    retry_after: str | None = "1"
    errors: int = 0
    slow: int = 0
    delay: float = 0.0
    hold: float = 0.0
    wrong_dim_after: int | None = None
    truncate: bool = False
    duplicate: bool = False
    nan: bool = False
    garbage: bool = False
    reverse: bool = False
    refuse: int | None = None
    models_route: bool = True
    max_model_len: int | None = None
    redirect: str | None = None
    redirect_posts: str | None = None
    refuse_body: bytes | None = None
    window: int | None = None
    booleans: bool = False
    redirect_posts_status: int = 307
    noise: float = 0.0
    random: bool = False
    flip_sign: bool = False
    batch_jitter: float = 0.0
    dtype: str | None = None
    other_model_after: int | None = None
    spared: tuple[str, ...] = ()
    info: dict[str, Any] | None = None
    listed: dict[str, Any] = field(default_factory=dict)


@dataclass
class Stats:
    """What the server saw."""

    requests: int = 0
    embeddings: int = 0
    answered: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    batch_sizes: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    listing_authorizations: list[str] = field(default_factory=list)


class EmbeddingServer:
    """An OpenAI-compatible embeddings server in a background thread.

    Args:
        model: A ``SentenceTransformer`` (anything with ``encode(texts) -> ndarray``).
        names: The model names it serves; others get 404.
        port: 0 picks a free one.
    """

    def __init__(self, model: Any, names: Sequence[str] = ("minilm",), port: int = 0) -> None:
        self.model = model
        self.names = tuple(names)
        self.faults = Faults()
        self.stats = Stats()
        self.lock = threading.Lock()
        self.encode_lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """The API root, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def model_name(self, name: str | None = None) -> str:
        """``openai+URL#NAME`` for ``--niah-model``."""
        return f"openai+{self.url}#{name or self.names[0]}"

    def start(self) -> EmbeddingServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def restart(self) -> EmbeddingServer:
        """Stop, then serve the same model names on the same address afresh (no faults).

        Set the new server's faults to stand for another model started in its place.
        """
        self.stop()
        return EmbeddingServer(self.model, self.names, port=self.port)

    def stop(self) -> None:
        """Stop serving and free the port, once the requests in flight have finished."""
        self.drain()
        self.httpd.shutdown()
        self.httpd.server_close()

    def drain(self, wait_s: float = 15.0) -> None:
        """Wait for the requests still in flight (at most ``wait_s``).

        A request the client gave up on (a timeout test) goes on in its thread: left
        running, it would count in the next test's fresh stats, or be killed inside the
        model's native code when the interpreter exits (an abort).
        """
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with self.lock:
                if self.stats.in_flight == 0:
                    return
            time.sleep(0.01)

    def reset(self) -> None:
        """No faults, fresh counts, once the requests still in flight have finished."""
        self.drain()
        with self.lock:
            self.faults = Faults()
            self.stats = Stats()

    def take(self, fault: str) -> bool:
        """Use up one of a counted fault; True if it applies to this request."""
        with self.lock:
            left = getattr(self.faults, fault)
            if left > 0:
                setattr(self.faults, fault, left - 1)
                return True
            return False

    def embed(self, texts: list[str], answered: int = 0) -> list[list[float]]:
        """The model's vectors (one request at a time through the model).

        ``answered``: the embeddings requests answered before this one.
        """
        if self.faults.window is not None:
            texts = [self.cut(text, self.faults.window) for text in texts]
        with self.encode_lock:
            rows = self.model.encode(
                texts, batch_size=max(len(texts), 1), convert_to_numpy=True, show_progress_bar=False
            )
        after = self.faults.other_model_after
        if after is not None and answered >= after:
            rows = other_model(texts, rows, self.faults.spared)
        return [[float(x) for x in row] for row in self.disturb(texts, rows)]

    def disturb(self, texts: list[str], rows: Any) -> Any:
        """The rows with the ``noise``, ``random`` and ``batch_jitter`` faults applied."""
        import numpy as np

        faults, rows = self.faults, np.asarray(rows, dtype=np.float64)
        fresh = np.random.default_rng()  # another draw on every call
        if faults.random:
            rows = fresh.standard_normal(rows.shape)
        if faults.noise:
            rows = rows + fresh.normal(0.0, faults.noise, rows.shape)
        if faults.batch_jitter:
            seed = hashlib.sha256("\0".join(texts).encode()).digest()[:8]
            direction = np.random.default_rng(int.from_bytes(seed, "little")).standard_normal(
                rows.shape[1]
            )
            direction *= faults.batch_jitter / np.linalg.norm(direction)
            rows = rows + np.linalg.norm(rows, axis=1, keepdims=True) * direction
        if faults.dtype is not None:
            rows = rounded(rows, faults.dtype)
        return rows

    def cut(self, text: str, tokens: int) -> str:
        """``text`` up to its first ``tokens`` tokens (the served model's own tokenizer)."""
        spans = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)[
            "offset_mapping"
        ]
        return text if len(spans) <= tokens else text[: spans[tokens - 1][1]]


def _handler(server: EmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the tests read the counts

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(payload).encode(), headers)

        def do_GET(self) -> None:
            with server.lock:
                server.stats.requests += 1
                server.stats.listing_authorizations.append(self.headers.get("Authorization") or "")
            if server.faults.redirect is not None:
                self._send(307, b"", {"Location": server.faults.redirect + self.path})
                return
            if self.path.rstrip("/") == "/info" and server.faults.info is not None:
                self._json(200, server.faults.info)
                return
            if self.path.rstrip("/") != "/v1/models" or not server.faults.models_route:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            entries = []
            for name in server.names:
                entry: dict[str, Any] = {
                    "id": name,
                    "object": "model",
                    "created": int(time.time()),  # changes every call, as vLLM's does
                    "owned_by": "pytest-niah-tests",
                }
                if server.faults.max_model_len is not None:
                    entry["max_model_len"] = server.faults.max_model_len
                entry |= server.faults.listed
                entries.append(entry)
            self._json(200, {"object": "list", "data": entries})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path == "/_faults":
                changes = json.loads(raw)
                with server.lock:
                    server.faults = dataclasses.replace(server.faults, **changes)
                self._json(200, {"ok": True})
                return
            with server.lock:
                server.stats.requests += 1
                server.stats.in_flight += 1
                server.stats.max_in_flight = max(server.stats.max_in_flight, server.stats.in_flight)
                server.stats.authorizations.append(self.headers.get("Authorization") or "")
            try:
                status, body, headers = self._embeddings(raw)
            finally:
                # Out of flight before the answer goes out: the client may send its next
                # request the moment it has read this one.
                with server.lock:
                    server.stats.in_flight -= 1
            self._send(status, body, headers)

        def _embeddings(self, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
            faults = server.faults
            started = time.monotonic()

            def error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
                return status, json.dumps({"error": {"message": message}}).encode(), headers or {}

            if self.path.rstrip("/") != "/v1/embeddings":
                return error(404, f"no route {self.path}")
            if faults.redirect_posts is not None:
                status = faults.redirect_posts_status
                return status, b"", {"Location": faults.redirect_posts + self.path}
            if faults.refuse is not None and faults.refuse_body is not None:
                return faults.refuse, faults.refuse_body, {}
            if faults.refuse is not None:
                return error(faults.refuse, f"bad credentials {self.headers.get('Authorization')}")
            if server.take("rate_limit"):
                headers = {} if faults.retry_after is None else {"Retry-After": faults.retry_after}
                return error(429, "slow down", headers)
            if server.take("errors"):
                return error(500, "internal error")
            if server.take("slow"):
                time.sleep(faults.delay)
            request = json.loads(raw)
            if request.get("model") not in server.names:
                return error(404, f"model {request.get('model')!r} not found")
            texts = request["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
            with server.lock:
                server.stats.embeddings += 1
                server.stats.batch_sizes.append(len(texts))
                server.stats.texts.extend(texts)
                answered = server.stats.answered
                server.stats.answered += 1
            rows = server.embed(texts, answered)
            if faults.flip_sign and answered % 2 == 1:
                rows = [[-x for x in row] for row in rows]
            if faults.wrong_dim_after is not None and answered >= faults.wrong_dim_after:
                rows = [row[:-1] for row in rows]
            if faults.nan:
                rows[0][0] = math.nan
            vectors: list[list[Any]] = rows
            if faults.booleans:
                vectors = [[value > 0 for value in row] for row in rows]
            data = [
                {"object": "embedding", "index": i, "embedding": row}
                for i, row in enumerate(vectors)
            ]
            if faults.truncate:
                data = data[:-1]
            if faults.duplicate and len(data) > 1:
                data[1]["index"] = 0
            if faults.reverse:
                data.reverse()
            left = faults.hold - (time.monotonic() - started)
            if left > 0:
                time.sleep(left)
            if faults.garbage:
                return 200, b"<html>502 Bad Gateway</html>", {}
            usage = {"prompt_tokens": 0, "total_tokens": 0}
            payload = {"object": "list", "data": data, "model": request["model"], "usage": usage}
            return 200, json.dumps(payload).encode(), {}

    return Handler


def ready(
    server: EmbeddingServer, monkeypatch: Any, key_env: str, key: str | None
) -> EmbeddingServer:
    """``server`` with no faults and fresh counts, reached without a proxy, the key set.

    ``key=None`` leaves the key variable unset. ``monkeypatch`` is pytest's fixture.
    """
    server.reset()
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    if key is None:
        monkeypatch.delenv(key_env, raising=False)
    else:
        monkeypatch.setenv(key_env, key)
    return server


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a sentence-transformers folder until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True, help="a sentence-transformers model folder")
    parser.add_argument("--name", action="append", help="model name(s) served; default minilm")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--window", type=int, help="read only the first N tokens of each text, saying nothing"
    )
    parser.add_argument("--max-model-len", type=int, help="the window GET /v1/models reports")
    args = parser.parse_args(argv)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(args.model_dir, device="cpu")
    server = EmbeddingServer(model, names=args.name or ("minilm",), port=args.port)
    server.faults.window = args.window
    server.faults.max_model_len = args.max_model_len
    print(server.url, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()


if __name__ == "__main__":
    main()
