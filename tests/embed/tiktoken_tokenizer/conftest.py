"""Fixtures of the tiktoken tests: the small encoding, its tokenizer, a ranks file, no downloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah.embed.tiktoken_tokenizer import TiktokenTokenizer, load_tiktoken


@pytest.fixture(scope="module")
def encoding():
    from tiktoken_ranks import RANKS_ENCODING

    return RANKS_ENCODING


@pytest.fixture(scope="module")
def tokenizer(encoding) -> TiktokenTokenizer:
    return TiktokenTokenizer(encoding)


@pytest.fixture
def ranks_file(tmp_path: Path) -> Path:
    from tiktoken_ranks import RANKS, write_ranks

    load_tiktoken.cache_clear()
    return write_ranks(tmp_path / "niah-small.tiktoken", RANKS)


@pytest.fixture
def no_downloads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty tiktoken cache, and any download attempt an immediate failure."""
    import requests

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"tiktoken tried to download {args}")

    monkeypatch.setattr(requests, "get", refuse)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    load_tiktoken.cache_clear()
    return cache
