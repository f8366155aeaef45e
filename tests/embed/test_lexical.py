"""The TF-IDF baseline: fitted on the documents first, never cached, identity of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.lexical import LexicalEmbedder
from pytest_niah.embed.protocol import Embedder, Windows
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, make_input

DOCS = [
    "The whale surfaced near the harbour.",
    "Bread rose in the oven before dawn.",
    "A quiet orchard stood behind the mill.",
]


def inputs(kind: str, texts: list[str]) -> list[ModelInput]:
    lexical = LexicalEmbedder()
    encodings = lexical.tokenizer.encode_batch(texts)
    return [
        make_input(kind, e, t, None, keep_text=True) for e, t in zip(encodings, texts, strict=True)
    ]


def test_documents_come_before_queries_and_rows_are_sparse():
    lexical = LexicalEmbedder()
    assert isinstance(lexical, Embedder)
    assert lexical.reads_text and lexical.fits_on_documents
    assert lexical.windows == Windows(None, None)
    with pytest.raises(EmbedderError) as info:
        lexical.encode(inputs(QUERY, ["Which animal surfaced?"]))
    assert "documents before the queries" in str(info.value) and "Fix:" in str(info.value)
    docs = lexical.encode(inputs(DOCUMENT, DOCS))
    query = lexical.encode(inputs(QUERY, ["Which animal surfaced near a harbour?"]))
    assert sp.issparse(docs) and docs.shape[0] == 3 and query.shape[0] == 1
    scores = (query @ docs.T).toarray().ravel()
    assert scores[0] > 0 and scores[1] == scores[2] == 0.0
    assert np.allclose(np.sqrt(docs.multiply(docs).sum(axis=1)), 1.0)
    lexical.close()
    lexical.close()


def test_identity_is_stable_and_free_of_library_versions():
    one, two = LexicalEmbedder(), LexicalEmbedder()
    assert one.identity == two.identity
    assert "versions" not in one.identity.parts
    source = one.identity.parts["source"]
    assert source["kind"] == "lexical" and source["method"] == "lexical:tfidf"
    assert "scikit-learn" in source
    assert one.name == "lexical:tfidf"


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(EmbedderError, match="lexical:tfidf"):
        LexicalEmbedder("bm99")


def test_the_encoder_fits_once_on_all_documents_and_stores_nothing(tmp_path: Path):
    docs = inputs(DOCUMENT, DOCS)
    queries = inputs(QUERY, ["Which animal surfaced?"])
    with EmbeddingStore(tmp_path / CACHE_FILE) as store:
        encoder = Encoder(LexicalEmbedder(), store, budget=1, batch_size=1)
        encoder.submit([*queries, docs[0]])
        encoder.submit(docs[1:])
        table = encoder.finish()
        assert store.count() == 0 and encoder.store is None
    assert sp.issparse(table.matrix) and encoder.stats.embedded == 4
    reference = LexicalEmbedder()
    fitted = reference.encode(docs)  # one fit on every document, then the queries
    got = table.matrix[table.rows([d.key for d in docs])]
    assert (got != fitted).nnz == 0
    assert (table.matrix[table.rows([queries[0].key])] != reference.encode(queries)).nnz == 0
