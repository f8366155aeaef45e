"""HTTP to an OpenAI-compatible embeddings server: requests, retries and the errors they give.

:class:`EmbeddingsClient` sends one JSON request at a time (many threads may share it):
408, 429, 5xx, timeouts and broken connections are retried with exponential backoff and
jitter (``Retry-After`` honoured); any other refusal is one error whose hint names the option
to change. The API key goes only into an unredirected ``Authorization`` header, and every
piece of a server's answer that reaches a message has it blanked
(:mod:`pytest_niah.embed.secrets`). Only the standard library speaks HTTP. The embedder that
uses it is :mod:`pytest_niah.embed.remote`.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_niah.embed.remote_address import RemoteModel, api_key
from pytest_niah.embed.secrets import MIN_PIECE, redact
from pytest_niah.embed.secrets import excerpt as excerpt_of
from pytest_niah.errors import EmbedderError

# Statuses worth another try: request timeout, rate limit, the server's own failures.
RETRY_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))
MAX_WAIT = 300.0  # the longest Retry-After honoured, in seconds
MAX_BACKOFF = 30.0
EXCERPT_CHARS = 200  # the most characters of a server's answer a message shows


class _PostsStay(urllib.request.HTTPRedirectHandler):
    """Follow a redirect of a GET only.

    urllib would resend a POST answered 301-303 as a GET, whose answer (a listing, a page)
    then reads as a broken embeddings reply.
    """

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        if req.get_method() != "GET":
            return None  # urllib then raises the 3xx as an HTTPError: reported as a redirect
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_PostsStay)


@dataclass(frozen=True)
class Reply:
    """One HTTP exchange: the status, the Retry-After and Location headers, the body."""

    status: int
    retry_after: str | None
    body: bytes
    location: str | None = None


class EmbeddingsClient:
    """Requests to one served model's API root, retried, with errors that say what to change.

    Args:
        remote: The served model's address.
        what: The model and endpoint, for messages.
        api_key_env: The environment variable holding the API key.
        concurrency: Most requests in flight (named in the hints).
        timeout: Seconds to wait for one response.
        retries: Further tries of a request that failed in a way worth retrying.
        backoff: The first wait between tries, in seconds; it doubles each time (with jitter).
        known_window: The window once it is known (``None`` before), for the hint of a 4xx.
    """

    def __init__(
        self,
        remote: RemoteModel,
        *,
        what: str,
        api_key_env: str,
        concurrency: int,
        timeout: float,
        retries: int,
        backoff: float,
        known_window: Callable[[], int | None],
    ) -> None:
        self.remote = remote
        self.what = what
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.known_window = known_window
        self.stopped = threading.Event()
        self.served: list[str] = []  # the model names GET /models lists

    def stop(self) -> None:
        """Stop retrying: requests still waiting for another try give up."""
        self.stopped.set()

    def call(self, method: str, route: str, payload: Any, *, optional: bool = False) -> Any:
        """Send one request, retried; the parsed JSON (``None``: an optional route is absent).

        ``route`` is under the API root (``embeddings``), or a whole URL (the root's ``/info``).
        """
        url = route if "://" in route else self.remote.url(route)
        # A whole URL (the root's /info) carries the query too: shown without it.
        shown = route.partition("?")[0] if "://" in route else self.remote.shown(route)
        data = None if payload is None else json.dumps(payload).encode()
        last = ""
        for attempt in range(self.retries + 1):
            if self.stopped.is_set():
                raise EmbedderError(f"the requests to {self.what} were stopped", "")
            wait: float | None = None
            try:
                reply = self._send(method, url, data)
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                last = self.redact(describe_failure(exc, self.timeout))
            else:
                if 200 <= reply.status < 300:
                    return self._parse_json(reply.body, shown, optional)
                if optional and reply.status in (404, 405, 501):
                    return None
                if reply.status not in RETRY_STATUS:
                    raise self.refused(reply, shown)
                last = f"HTTP {reply.status}{self.excerpt(reply.body)}"
                wait = retry_after(reply.retry_after)
            if attempt == self.retries:
                break
            if wait is None:
                wait = min(MAX_BACKOFF, self.backoff * 2**attempt) * random.uniform(0.5, 1.0)
            else:
                wait = min(wait, MAX_WAIT) * random.uniform(1.0, 1.1)
            if self.stopped.wait(wait):
                break
        hint = (
            "the server keeps rate-limiting: lower --niah-remote-concurrency "
            f"(now {self.concurrency}) or raise the server's rate limit"
            if last.startswith("HTTP 429")
            else "check that the server is up and healthy (its logs); lower "
            f"--niah-remote-concurrency (now {self.concurrency}) or raise "
            f"--niah-remote-timeout (now {self.timeout:g} s) if it is overloaded"
        )
        raise EmbedderError(
            f"the embeddings server of {self.what} failed {self.retries + 1} tries of "
            f"{method} {shown}; the last: {last}",
            hint,
        )

    def _send(self, method: str, url: str, data: bytes | None) -> Reply:
        headers = {"Accept": "application/json", "User-Agent": "pytest-niah"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        key = os.environ.get(self.api_key_env, "")
        if key:
            # Unredirected: a redirect to another host must not carry the key along.
            request.add_unredirected_header("Authorization", f"Bearer {key}")
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                return Reply(int(response.status), None, response.read())
        except urllib.error.HTTPError as exc:
            with exc:
                body = exc.read() if exc.fp is not None else b""
            reply_headers = exc.headers
            return Reply(
                int(exc.code),
                reply_headers.get("Retry-After"),
                body,
                reply_headers.get("Location"),
            )

    def _parse_json(self, body: bytes, url: str, optional: bool) -> Any:
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if optional:
                return None
            raise self.bad(
                f"answered {url} with a body that is not JSON{self.excerpt(body)}",
                "check that the URL in --niah-model is the API root of an OpenAI-compatible "
                "server (e.g. http://HOST:PORT/v1), not a web page or proxy",
            ) from None

    def refused(self, reply: Reply, url: str) -> EmbedderError:
        """An answer that another try will not change (4xx)."""
        problem = (
            f"the embeddings server of {self.what} refused {url} with HTTP {reply.status}"
            f"{self.excerpt(reply.body)}"
        )
        if 300 <= reply.status < 400:
            where = (reply.location or "").split("?")[0].split("#")[0]
            target = f" to {self.redact(where)!r}" if where else ""
            hint = (
                f"the server redirected the request{target}; pytest-niah does not follow a "
                "redirect of an embeddings request, so that the key is not sent where you did "
                "not point it: give the address it redirects to (the final URL) in --niah-model"
            )
        elif reply.status in (401, 403):
            state = "is set" if os.environ.get(self.api_key_env) else "is not set"
            hint = (
                f"put a valid key in the environment variable {self.api_key_env} (it {state}), "
                "or name another one with --niah-api-key-env"
            )
        elif reply.status == 404:
            hint = (
                "check the API root in --niah-model (usually ending in /v1) and the model name "
                "after '#': it must be one the server serves"
            )
            if self.served:
                hint += " (it lists " + ", ".join(map(repr, self.served[:10])) + ")"
        else:
            window = self.known_window()
            hint = (
                "check that --niah-tokenizer is the served model's tokenizer and that the "
                f"window (--niah-max-seq-length, now {window or 'unset'}) is at most the "
                "server's input limit"
            )
        return EmbedderError(problem, hint)

    def excerpt(self, body: bytes) -> str:
        """A short, single-line piece of a body, the API key and query blanked first."""
        text = self._without_query(body.decode("utf-8", "replace"))
        text = excerpt_of(text, api_key(self.api_key_env), EXCERPT_CHARS)
        return f": {text!r}" if text else ""

    def redact(self, text: str) -> str:
        """``text`` (from the server) with the API key and the query blanked in every form."""
        return redact(self._without_query(text), api_key(self.api_key_env))

    def _without_query(self, text: str) -> str:
        """``text`` with the query string and each of its values blanked.

        A server may echo the URL it was sent.
        """
        query = self.remote.query
        values = [part.partition("=")[2] or part for part in re.split(r"[&;]", query)]
        for secret in sorted({query, *values}, key=len, reverse=True):
            if len(secret) >= MIN_PIECE:
                text = redact(text, secret)
        return text

    def bad(self, problem: str, hint: str = "") -> EmbedderError:
        """The error for an answer that breaks the OpenAI embeddings API (``hint``: the fix)."""
        return EmbedderError(
            f"the embeddings server of {self.what} {problem}",
            hint
            or "the server does not speak the OpenAI embeddings API as expected; check "
            "its version and logs",
        )


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), if any."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def describe_failure(exc: BaseException, timeout: float) -> str:
    """What went wrong on the wire, in a few words (no headers, so no key)."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
        return f"no response within {timeout:g} s (--niah-remote-timeout)"
    return f"{type(reason).__name__}: {str(reason).strip()[:EXCERPT_CHARS] or 'connection failed'}"
