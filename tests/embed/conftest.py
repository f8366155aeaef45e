"""Real packaged models, loaded once per session (the CPU, float32)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_niah.embed.st_backend import SentenceTransformerEmbedder


@pytest.fixture(scope="session")
def minilm() -> Iterator[SentenceTransformerEmbedder]:
    """The packaged all-MiniLM-L6-v2 (a 256-token window)."""
    embedder = SentenceTransformerEmbedder("packaged-minilm", device="cpu")
    yield embedder
    embedder.close()


@pytest.fixture(scope="session")
def static() -> Iterator[SentenceTransformerEmbedder]:
    """The packaged model2vec static model (reads every token)."""
    embedder = SentenceTransformerEmbedder("packaged-static", device="cpu")
    yield embedder
    embedder.close()
