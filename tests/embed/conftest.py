"""Real packaged models, loaded once per session (the CPU, float32), and the loopback server.

The remote-embedder tests (test_remote*.py) share the server fixtures below; a module that
defines its own ``server`` or ``st_model`` uses that one instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_server import EmbeddingServer, ready
from remote_kit import KEY_ENV, SECRET

from pytest_niah.embed.models import packaged_folder
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


# -- the loopback server of the remote-embedder tests --------------------------------------------


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    folder = packaged_folder("packaged-minilm")
    assert folder is not None
    return folder


@pytest.fixture(scope="session")
def st_model(minilm_folder: Path):
    """The packaged MiniLM as sentence-transformers loads it: the server only reads it."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_folder), device="cpu")


@pytest.fixture(scope="module")
def served(st_model) -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(st_model, names=("minilm", "minilm-v2")).start()
    yield server
    server.stop()


@pytest.fixture
def server(served: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> EmbeddingServer:
    """The module's server with no faults and fresh counts; loopback never goes via a proxy."""
    return ready(served, monkeypatch, KEY_ENV, SECRET)
