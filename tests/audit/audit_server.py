"""The loopback embeddings server of tests/embed/openai_server.py, with the faults an audit sees.

:class:`AuditServer` adds to :class:`~openai_server.Faults` (``server.faults``) what only an
audit looks for (``server.extra``, :class:`AuditFaults`): refusing long inputs or large
batches with a status of choice, a bfloat16 deployment (float32 vectors rounded to bfloat16,
plus the batch-dependent jitter of ``faults.batch_jitter``), and another model of the same
dimension started in the model's place (a fixed rotation of every vector).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "embed"))

from openai_server import EmbeddingServer, _handler

SECRET = "sk-niah-AUDIT-SENTINEL-0123456789abcdef"
KEY_ENV = "NIAH_AUDIT_TEST_KEY"
# A small window keeps each audit to a few seconds; the full window is audited once.
SMALL = ["--max-seq-length", "64", "--max-batch", "8", "--concurrency", "2"]


@dataclass
class AuditFaults:
    """What the server does that only an audit looks for.

    Attributes:
        refuse_over: Refuse a request holding a text of more than this many tokens.
        refuse_status: The status of that refusal (413, 400 ...).
        refuse_echo: Echo the Authorization header in the refusal's message.
        max_batch: Refuse a request of more texts than this with 413.
        bfloat16: Round every vector to bfloat16 (after ``faults.batch_jitter``).
        rotate: Serve another model of the same dimension (every vector rotated).
    """

    refuse_over: int | None = None
    refuse_status: int = 413
    refuse_echo: bool = False
    max_batch: int | None = None
    bfloat16: bool = False
    rotate: bool = False


def bfloat16(rows: np.ndarray) -> np.ndarray:
    """``rows`` rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(rows, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


class AuditServer(EmbeddingServer):
    """An :class:`EmbeddingServer` with :class:`AuditFaults` as ``extra``."""

    def __init__(self, model: Any, names: tuple[str, ...] = ("minilm",), port: int = 0) -> None:
        super().__init__(model, names, port)
        self.extra = AuditFaults()
        self.httpd.RequestHandlerClass = _audit_handler(self)
        self._rotation: np.ndarray | None = None

    def reset(self) -> None:
        """No faults of either kind, fresh counts."""
        super().reset()
        self.extra = AuditFaults()

    def disturb(self, texts: list[str], rows: Any) -> Any:
        """The base faults, then another model's rotation and bfloat16 rounding."""
        rows = super().disturb(texts, rows)
        if self.extra.rotate:
            rows = rows @ self.rotation(rows.shape[1])
        if self.extra.bfloat16:
            rows = bfloat16(rows).astype(np.float64)
        return rows

    def rotation(self, dim: int) -> np.ndarray:
        """A fixed random rotation of the vectors (the same one every call)."""
        if self._rotation is None or self._rotation.shape[0] != dim:
            matrix = np.random.default_rng(7).standard_normal((dim, dim))
            self._rotation = np.linalg.qr(matrix)[0]
        return self._rotation

    def too_long(self, texts: list[str]) -> bool:
        """Whether a text holds more tokens than ``extra.refuse_over``."""
        limit = self.extra.refuse_over
        if limit is None:
            return False
        counts = self.model.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return any(len(ids) > limit for ids in counts)


def _audit_handler(server: AuditServer) -> type:
    base: Any = _handler(server)

    class Handler(base):  # type: ignore[misc, valid-type]
        def _embeddings(self, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
            extra = server.extra
            try:
                texts = json.loads(raw)["input"]
            except (ValueError, KeyError, TypeError):
                return super()._embeddings(raw)
            texts = [texts] if isinstance(texts, str) else list(texts)
            if extra.max_batch is not None and len(texts) > extra.max_batch:
                message = f"batch of {len(texts)} exceeds max_client_batch_size {extra.max_batch}"
                return 413, json.dumps({"error": {"message": message}}).encode(), {}
            if server.too_long(texts):
                message = f"input exceeds the maximum of {extra.refuse_over} tokens"
                if extra.refuse_echo:
                    message += f" (request from {self.headers.get('Authorization')})"
                body = json.dumps({"error": {"message": message}}).encode()
                return extra.refuse_status, body, {}
            return super()._embeddings(raw)

    return Handler
