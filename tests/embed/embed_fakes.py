"""A fake embedder and model inputs for the runner and store tests (no model, no torch).

Imported by test modules here and, in spawned or child processes, by name: keep it free of
pytest fixtures.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.embed.identity import ModelIdentity, model_identity
from pytest_niah.embed.protocol import Windows
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, input_key
from pytest_niah.haystacks.tokens import WordTokenizer

DIM = 16


def fake_vector(key: str, dim: int = DIM) -> np.ndarray:
    """A deterministic float32 vector per input key."""
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


def make_inputs(
    n: int, *, start: int = 0, tokens: int | Sequence[int] = 8, kind: str = DOCUMENT
) -> list[ModelInput]:
    """``n`` distinct inputs; ``tokens`` is one length or a length per input (cycled)."""
    lengths = [tokens] if isinstance(tokens, int) else list(tokens)
    out = []
    for i in range(start, start + n):
        length = lengths[i % len(lengths)]
        ids = np.arange(i * 1000, i * 1000 + length, dtype=np.int64)
        out.append(ModelInput(input_key(kind, ids), kind, ids, f"text {i}"))
    return out


class FakeEmbedder:
    """Hash-seeded vectors; records every batch it embeds.

    Args:
        name: Part of the identity: two fakes of one name share cache entries.
        dim: Vector size.
        delay: Seconds each ``encode`` call sleeps (a "forward pass").
        fail_on: Raise ``RuntimeError`` on this call (1-based).
        short_on: Return one row too few on this call.
        dim_on: Return vectors of ``dim + 1`` from this call on.
        nan_texts: Inputs whose text starts with this embed to NaN rows.
    """

    reads_text = True
    fits_on_documents = False

    def __init__(
        self,
        name: str = "fake",
        *,
        dim: int = DIM,
        delay: float = 0.0,
        fail_on: int | None = None,
        short_on: int | None = None,
        dim_on: int | None = None,
        nan_texts: str | None = None,
    ) -> None:
        self.name = name
        self.dim = dim
        self.delay = delay
        self.fail_on = fail_on
        self.short_on = short_on
        self.dim_on = dim_on
        self.nan_texts = nan_texts
        self.batches: list[list[ModelInput]] = []

    @property
    def identity(self) -> ModelIdentity:
        return model_identity({"kind": "fake", "name": self.name}, {}, versions=False)

    @property
    def tokenizer(self) -> WordTokenizer:
        return WordTokenizer()

    @property
    def windows(self) -> Windows:
        return Windows(None, None)

    @property
    def seen(self) -> list[str]:
        """Keys embedded, in order."""
        return [item.key for batch in self.batches for item in batch]

    def encode(self, inputs: Sequence[ModelInput]) -> Any:
        call = len(self.batches) + 1
        if call == self.fail_on:
            raise RuntimeError("out of memory")
        self.batches.append(list(inputs))
        if self.delay:
            time.sleep(self.delay)
        dim = self.dim + 1 if self.dim_on is not None and call >= self.dim_on else self.dim
        rows = np.stack([fake_vector(item.key, dim) for item in inputs])
        if self.nan_texts is not None:
            rows[[item.text.startswith(self.nan_texts) for item in inputs]] = np.nan
        if call == self.short_on:
            rows = rows[:-1]
        return rows

    def close(self) -> None:
        pass


def write_concurrently(path: str, start: int, barrier: Any) -> int:
    """One of several processes embedding overlapping inputs into one store (spawned)."""
    from pytest_niah.embed.runner import Encoder
    from pytest_niah.embed.store import EmbeddingStore

    items = make_inputs(600, start=start)
    barrier.wait()
    with EmbeddingStore(path, timeout=30) as store:
        encoder = Encoder(FakeEmbedder(delay=0.001), store, budget=0, batch_size=16)
        encoder.submit(items)
        table = encoder.finish()
        expected = np.stack([fake_vector(item.key) for item in items])
        assert np.array_equal(table.matrix[table.rows([i.key for i in items])], expected)
        return encoder.stats.embedded


def link_into_blobs(snapshot: Path) -> Path:
    """Store ``snapshot``'s files as the hub cache does: each one a link to ``../blobs/SHA``."""
    blobs = snapshot.parents[1] / "blobs"
    blobs.mkdir(exist_ok=True)
    for path in sorted(p for p in snapshot.rglob("*") if p.is_file() and not p.is_symlink()):
        blob = blobs / hashlib.sha256(path.read_bytes()).hexdigest()
        if not blob.exists():
            shutil.move(path, blob)
        else:
            path.unlink()
        path.symlink_to(os.path.relpath(blob, path.parent))
    return snapshot


def readable_bytes(path: Path) -> bytes:
    """A file's bytes as a reader sees them: saved runs are gzip, so look inside."""
    import gzip

    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
