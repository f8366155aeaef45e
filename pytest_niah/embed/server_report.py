"""What a served model's server reports about itself: part of its identity, and its window.

Two routes, each asked once and optional (a server without one answers 404):

- ``GET /models`` under the API root (vLLM, infinity, Ollama, OpenAI): the model's entry,
  of which the fields that name what is served and stay put between calls are kept
  (:data:`~pytest_niah.embed.remote_response.STABLE_FIELDS`: vLLM's ``max_model_len``,
  infinity's ``backend``...);
- ``GET /info`` at the server's root (text-embeddings-inference): the model's id and commit
  (``model_sha``), its dtype, its input limit (``max_input_length``) and the server's
  version (:data:`INFO_FIELDS`).

A deployment restarted with another dtype or revision reports it here where the server
says it; where it does not, its answers tell (:mod:`~pytest_niah.embed.server_fingerprint`).
Every string is redacted of the API key before it reaches the identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pytest_niah.embed.remote_http import EmbeddingsClient
from pytest_niah.embed.remote_response import STABLE_FIELDS

# What text-embeddings-inference's /info says about the model it serves (not its queue sizes).
INFO_FIELDS = (
    "model_id",
    "model_sha",
    "model_dtype",
    "model_type",
    "max_input_length",
    "auto_truncate",
    "version",
    "sha",
)


def info_url(base: str) -> str:
    """``/info`` at the root of the server whose API root is ``base`` (query kept)."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, "/info", parts.query, ""))


class ServerReport:
    """What the server of ``model`` says, asked through ``client`` on first use."""

    def __init__(self, client: EmbeddingsClient, model: str) -> None:
        self.client = client
        self.model = model

    @cached_property
    def listing(self) -> Mapping[str, Any] | None:
        """The server's ``GET /models`` entry for the model, or ``None`` if it lists none."""
        body = self.client.call("GET", "models", None, optional=True)
        if body is None:
            return None
        data = body.get("data") if isinstance(body, Mapping) else None
        entries = [e for e in data if isinstance(e, Mapping)] if isinstance(data, list) else []
        self.client.served = [self.client.redact(str(e.get("id"))) for e in entries]
        return next((e for e in entries if e.get("id") == self.model), None)

    @cached_property
    def info(self) -> dict[str, Any] | None:
        """text-embeddings-inference's ``/info`` fields (:data:`INFO_FIELDS`), or ``None``."""
        body = self.client.call("GET", info_url(self.client.remote.base), None, optional=True)
        if not isinstance(body, Mapping):
            return None
        kept = {k: body[k] for k in INFO_FIELDS if k in body}
        return self._redacted(kept) if kept else None

    def listed(self) -> dict[str, Any] | None:
        """The stable fields of the model's ``/models`` entry (``None``: not listed)."""
        entry = self.listing
        if entry is None:
            return None
        return self._redacted({k: entry[k] for k in STABLE_FIELDS if k in entry})

    def window(self) -> tuple[int, str] | None:
        """The input limit the server reports, and the field it gave it in (``None``: none)."""
        served = self.listing.get("max_model_len") if self.listing is not None else None
        told = (self.info or {}).get("max_input_length")
        for value, name in ((served, "max_model_len"), (told, "max_input_length")):
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, name
        return None

    def _redacted(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        # A server that echoes the key into what it reports must not put it in the identity.
        return {k: self.client.redact(v) if isinstance(v, str) else v for k, v in fields.items()}
