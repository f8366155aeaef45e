"""Embedders: the protocol the engine needs, a lexical baseline, and the model registry.

The sentence-transformers backend lives in :mod:`pytest_niah.st_backend` (re-exported
here); torch is imported only when a neural model is loaded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pytest_niah.embed.models import LEXICAL_PREFIX as LEXICAL_PREFIX
from pytest_niah.embed.models import MODEL_PRESETS as MODEL_PRESETS
from pytest_niah.embed.models import PACKAGED_MINILM as PACKAGED_MINILM
from pytest_niah.embed.models import resolve_model_name as resolve_model_name
from pytest_niah.embed.st_backend import SentenceTransformerEmbedder as SentenceTransformerEmbedder
from pytest_niah.embed.st_backend import pick_device as pick_device
from pytest_niah.embed.st_backend import resolve_dtype as resolve_dtype
from pytest_niah.errors import EmbedderError as EmbedderError

Span = tuple[int, int]


@runtime_checkable
class Embedder(Protocol):
    """What the engine needs from a model.

    Token spans are character spans of the tokens the model's tokenizer makes of a text,
    without special tokens; haystack lengths are counted in them.
    """

    name: str

    @property
    def fingerprint(self) -> str:
        """A hash that changes whenever the embeddings could change."""
        ...

    @property
    def max_tokens(self) -> int | None:
        """How many document tokens the model reads before truncating; ``None``: no limit."""
        ...

    def token_spans(self, texts: Sequence[str]) -> list[list[Span]]:
        """Character spans of each text's tokens."""
        ...

    def encode_queries(self, texts: Sequence[str]) -> Any:
        """One row per query: a dense ndarray or a scipy sparse matrix."""
        ...

    def encode_documents(self, texts: Sequence[str]) -> Any:
        """One row per document: a dense ndarray or a scipy sparse matrix."""
        ...


class LexicalEmbedder:
    """A TF-IDF baseline: it only sees shared words, so one-hop needles are invisible to it.

    The vocabulary and IDF are fitted on the first ``encode_documents`` call (the engine
    embeds all documents in one pass before the queries).
    """

    TOKEN = re.compile(r"\w+|[^\w\s]")

    def __init__(self, kind: str = "tfidf") -> None:
        if kind != "tfidf":
            raise EmbedderError(f"lexical baseline {kind!r} is unknown; use 'lexical:tfidf'")
        self.name = f"{LEXICAL_PREFIX}{kind}"
        self._vectorizer: Any = None

    @property
    def fingerprint(self) -> str:
        """Changes with scikit-learn's version, which owns the TF-IDF arithmetic."""
        import sklearn

        return hashlib.sha256(f"{self.name}:v1:sklearn-{sklearn.__version__}".encode()).hexdigest()

    @property
    def max_tokens(self) -> int | None:
        """TF-IDF reads the whole text."""
        return None

    def token_spans(self, texts: Sequence[str]) -> list[list[Span]]:
        """Words and punctuation marks."""
        return [[m.span() for m in self.TOKEN.finditer(text)] for text in texts]

    def encode_documents(self, texts: Sequence[str]) -> Any:
        """Fit on the first call, then L2-normalized sparse TF-IDF rows."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        if self._vectorizer is None:
            self._vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
            return self._vectorizer.fit_transform(list(texts))
        return self._vectorizer.transform(list(texts))

    def encode_queries(self, texts: Sequence[str]) -> Any:
        """Sparse TF-IDF rows in the documents' vocabulary."""
        if self._vectorizer is None:
            raise EmbedderError("the lexical baseline must see the documents before the queries")
        return self._vectorizer.transform(list(texts))


def load_embedder(config: Any, *, show_progress: bool = False) -> Embedder:
    """The embedder a :class:`~pytest_niah.config.NiahConfig` asks for (not loaded yet)."""
    if config.model.startswith(LEXICAL_PREFIX):
        return LexicalEmbedder(config.model[len(LEXICAL_PREFIX) :])
    return SentenceTransformerEmbedder(
        config.model,
        device=config.device,
        dtype=config.dtype,
        batch_size=config.batch_size,
        trust_remote_code=config.trust_remote_code,
        model_kwargs=config.model_kwargs,
        encode_kwargs=config.encode_kwargs,
        query_prompt=config.query_prompt,
        doc_prompt=config.doc_prompt,
        max_seq_length=config.max_seq_length,
        show_progress=show_progress,
        token_budget=config.token_budget or None,
    )
