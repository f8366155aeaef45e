"""A TF-IDF baseline: it only sees shared words, so one-hop needles are invisible to it."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from importlib import metadata
from typing import Any

from pytest_niah.embed.identity import ModelIdentity, model_identity
from pytest_niah.embed.models import LEXICAL_KINDS, LEXICAL_PREFIX
from pytest_niah.embed.protocol import Windows
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import QUERY, ModelInput
from pytest_niah.haystacks.tokens import WordTokenizer

__all__ = ["LEXICAL_KINDS", "LEXICAL_PREFIX", "LexicalEmbedder"]


class LexicalEmbedder:
    """TF-IDF over words (English stop words dropped), fitted on a run's documents.

    The vocabulary and IDF are fitted on the first documents it embeds; the engine hands it
    every document of a run in one call, then the queries.
    """

    reads_text = True
    fits_on_documents = True

    def __init__(self, kind: str = "tfidf") -> None:
        if kind not in LEXICAL_KINDS:
            raise EmbedderError(
                f"lexical baseline {kind!r} is unknown",
                "use one of " + ", ".join(LEXICAL_PREFIX + k for k in LEXICAL_KINDS),
            )
        self.name = f"{LEXICAL_PREFIX}{kind}"
        self._vectorizer: Any = None

    @cached_property
    def identity(self) -> ModelIdentity:
        """scikit-learn's version owns the arithmetic."""
        source = {
            "kind": "lexical",
            "method": self.name,
            "scikit-learn": metadata.version("scikit-learn"),
        }
        return model_identity(source, {}, versions=False)

    @cached_property
    def tokenizer(self) -> WordTokenizer:
        """Words and punctuation marks."""
        return WordTokenizer()

    @property
    def windows(self) -> Windows:
        """TF-IDF reads the whole text."""
        return Windows(None, None)

    def encode(self, inputs: Sequence[ModelInput]) -> Any:
        """Sparse, L2-normalized TF-IDF rows; the first call (documents) fits the vocabulary."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = [item.text for item in inputs]
        if self._vectorizer is None:
            if any(item.kind == QUERY for item in inputs):
                raise EmbedderError(
                    "the lexical baseline must see the documents before the queries",
                    "embed the documents first",
                )
            self._vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
            return self._vectorizer.fit_transform(texts)
        return self._vectorizer.transform(texts)

    def close(self) -> None:
        """Nothing to release."""
