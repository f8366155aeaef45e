"""The remote-embedder tests' key, texts and helpers around the loopback server's embedder."""

from __future__ import annotations

import pytest
from openai_server import EmbeddingServer

from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, make_input

SECRET = "sk-niah-SENTINEL-0123456789abcdef"
KEY_ENV = "NIAH_TEST_API_KEY"
TEXTS = [
    "A whale surfaced near the harbour at dawn.",
    "Which animal surfaced near the harbour?",
    "The keeper counted the bells of the clock tower. " * 80,  # past the 254-token window
    "Bread rose in the quiet orchard near the mill.",
    "The widow wrote a letter to the merchant in the rain.",
    "Lanterns swayed over the winter market.",
]


def remote(server: EmbeddingServer, name: str = "minilm", **kwargs) -> RemoteEmbedder:
    """A remote embedder of the test server: fast retries, the sentinel key."""
    settings = {
        "tokenizer": "packaged-minilm",
        "api_key_env": KEY_ENV,
        "retries": 3,
        "backoff": 0.01,
        "timeout": 10.0,
    } | kwargs
    return RemoteEmbedder(server.model_name(name), **settings)


def inputs_of(embedder: RemoteEmbedder, texts=TEXTS, kind: str = DOCUMENT) -> list[ModelInput]:
    window = embedder.windows.query if kind == QUERY else embedder.windows.document
    encodings = embedder.tokenizer.encode_batch(list(texts))
    return [
        make_input(kind, encoding, text, window, keep_text=True)
        for encoding, text in zip(encodings, texts, strict=True)
    ]


def embed_error(embedder: RemoteEmbedder, texts=TEXTS) -> EmbedderError:
    with pytest.raises(EmbedderError) as info:
        embedder.encode(inputs_of(embedder, texts))
    embedder.close()
    assert SECRET not in str(info.value)
    return info.value
