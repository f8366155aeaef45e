from __future__ import annotations

import hashlib
import multiprocessing
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from pytest_niah.embed.cache import (
    CacheError,
    CachingEmbedder,
    EmbeddingCache,
    default_cache_path,
    text_key,
)
from pytest_niah.embed.embedders import PACKAGED_MINILM, Embedder, LexicalEmbedder

DIM = 16


def fake_vector(text: str, kind: str = "document", dim: int = DIM) -> np.ndarray:
    """A deterministic float32 vector per (kind, text)."""
    seed = int.from_bytes(hashlib.sha256(f"{kind}\0{text}".encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


class FakeEmbedder:
    """Hash-seeded random vectors; records every text it is asked to embed."""

    def __init__(self, fingerprint: str = "fake-v1", delay: float = 0.0) -> None:
        self.name = "fake"
        self._fingerprint = fingerprint
        self.delay = delay
        self.seen: list[str] = []
        self.calls = 0

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def max_tokens(self) -> int | None:
        return 128

    def token_spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [[(0, len(t))] for t in texts]

    def _rows(self, texts: Sequence[str], kind: str) -> np.ndarray:
        self.calls += 1
        self.seen.extend(texts)
        if self.delay:
            time.sleep(self.delay)
        return np.stack([fake_vector(t, kind) for t in texts])

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._rows(texts, "document")

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._rows(texts, "query")


class NanEmbedder(FakeEmbedder):
    """Like FakeEmbedder, but texts starting with 'nan' embed to NaN rows."""

    def _rows(self, texts: Sequence[str], kind: str) -> np.ndarray:
        rows = super()._rows(texts, kind)
        rows[[t.startswith("nan") for t in texts]] = np.nan
        return rows


def texts_of(n: int, start: int = 0) -> list[str]:
    return [f"text number {i} " + "word " * (i % 7) for i in range(start, start + n)]


@pytest.fixture
def cache(tmp_path: Path):
    with EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite") as c:
        yield c


def test_round_trip_is_exact_float32(cache: EmbeddingCache):
    texts = ["alpha", "beta", "ünïcödé ✓", ""]
    vectors = np.random.default_rng(0).standard_normal((4, 384)).astype(np.float32)
    vectors[0, 0] = np.float32(1e-38)  # subnormal-adjacent values survive too
    cache.put_many("fp", texts, vectors)
    found = cache.get_many("fp", texts)
    assert sorted(found) == [0, 1, 2, 3]
    for i in range(4):
        assert found[i].dtype == np.float32
        assert found[i].tobytes() == vectors[i].tobytes()
    assert cache.count() == 4


def test_float64_input_is_stored_as_float32(cache: EmbeddingCache):
    vectors = np.random.default_rng(1).standard_normal((2, 8))
    cache.put_many("fp", ["a", "b"], vectors)
    found = cache.get_many("fp", ["a", "b"])
    assert np.array_equal(found[1], vectors[1].astype(np.float32))


def test_get_many_mixes_hits_and_misses(cache: EmbeddingCache):
    stored = texts_of(700)  # more than one lookup chunk of 500
    cache.put_many("fp", stored, np.stack([fake_vector(t) for t in stored]))
    query = ["missing-1", stored[3], "missing-2", stored[650], stored[3]]
    found = cache.get_many("fp", query)
    assert sorted(found) == [1, 3, 4]
    assert np.array_equal(found[3], fake_vector(stored[650]))
    assert np.array_equal(found[1], found[4])
    found[1][0] = 99.0  # returned arrays are private copies
    assert found[4][0] != 99.0
    assert cache.stats() == {"hits": 3, "misses": 2, "writes": 700}
    assert len(cache.get_many("fp", stored)) == 700


def test_fingerprints_are_separate(cache: EmbeddingCache):
    cache.put_many("model-a", ["x"], np.ones((1, 4), np.float32))
    cache.put_many("model-b", ["x"], np.zeros((1, 4), np.float32))
    assert cache.get_many("model-a", ["x"])[0].tolist() == [1, 1, 1, 1]
    assert cache.get_many("model-b", ["x"])[0].tolist() == [0, 0, 0, 0]
    assert cache.get_many("model-c", ["x"]) == {}
    assert cache.count("model-a") == 1 and cache.count() == 2


def test_count_and_clear_cover_a_models_query_and_document_spaces(cache: EmbeddingCache):
    one = np.ones((1, 4), np.float32)
    for key in ("m", "m:query", "m:document", "m2:document", "m;x"):
        cache.put_many(key, ["t"], one)
    assert cache.count("m") == 3
    assert cache.count("m:query") == 1
    assert cache.clear("m:query") == 1
    assert cache.clear("m") == 2
    assert cache.count() == 2
    assert cache.clear() == 2
    assert cache.count() == 0


def test_insert_or_ignore_keeps_the_first_vector(cache: EmbeddingCache):
    cache.put_many("fp", ["a"], np.ones((1, 4), np.float32))
    cache.put_many("fp", ["a"], np.zeros((1, 4), np.float32))
    assert cache.get_many("fp", ["a"])[0].tolist() == [1, 1, 1, 1]
    assert cache.count() == 1 and cache.stats()["writes"] == 1


def test_put_many_refuses_mismatched_rows(cache: EmbeddingCache):
    with pytest.raises(ValueError, match="2 texts"):
        cache.put_many("fp", ["a", "b"], np.ones((3, 4), np.float32))


def test_schema_and_pragmas(tmp_path: Path):
    path = tmp_path / "c.sqlite"
    EmbeddingCache(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM niah_schema").fetchall() == [(1,)]
        columns = [r[1] for r in conn.execute("PRAGMA table_info(embeddings)")]
        assert columns == ["fingerprint", "text_sha256", "dim", "dtype", "vector"]
    finally:
        conn.close()


def test_a_foreign_schema_version_is_refused(tmp_path: Path):
    path = tmp_path / "c.sqlite"
    EmbeddingCache(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE niah_schema SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(CacheError, match="schema version 99") as info:
        EmbeddingCache(path)
    assert str(path) in str(info.value) and "delete" in str(info.value)


def test_closed_cache_says_so(tmp_path: Path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()
    with pytest.raises(CacheError, match="closed"):
        cache.count()


def test_default_cache_path_follows_the_environment(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "embeddings.sqlite"
    monkeypatch.delenv("NIAH_CACHE_DIR")
    assert default_cache_path().name == "embeddings.sqlite"
    assert "pytest-niah" in str(default_cache_path())


def test_text_key_is_the_sha256_of_utf8():
    assert text_key("é") == hashlib.sha256("é".encode()).hexdigest()


# --- CachingEmbedder ---------------------------------------------------------------------


def test_caching_embedder_embeds_each_unique_text_once_and_a_warm_run_embeds_nothing(
    tmp_path: Path,
):
    path = tmp_path / "c.sqlite"
    docs = [*texts_of(600), *texts_of(50)]  # 50 repeats
    queries = ["which number?", "what word?", "which number?"]
    inner = FakeEmbedder()
    with EmbeddingCache(path) as cache:
        cold = CachingEmbedder(inner, cache, chunk_size=64)
        assert isinstance(cold, Embedder)
        cold_docs = cold.encode_documents(docs)
        cold_queries = cold.encode_queries(queries)
        assert cold.embedded == 602
        assert sorted(inner.seen) == sorted({*docs, *queries})
        assert inner.calls == 10 + 1  # ceil(600 / 64) document chunks, one query chunk
        assert cache.count(inner.fingerprint) == 602
    expected_docs = np.stack([fake_vector(t) for t in docs])
    assert cold_docs.dtype == np.float32 and np.array_equal(cold_docs, expected_docs)
    assert np.array_equal(cold_queries, np.stack([fake_vector(q, "query") for q in queries]))

    warm_inner = FakeEmbedder()
    with EmbeddingCache(path) as cache:
        warm = CachingEmbedder(warm_inner, cache)
        assert np.array_equal(warm.encode_documents(docs), cold_docs)
        assert np.array_equal(warm.encode_queries(queries), cold_queries)
        assert warm.embedded == 0 and warm_inner.calls == 0
        assert cache.stats() == {"hits": len(docs) + 3, "misses": 0, "writes": 0}


def test_partial_warm_run_embeds_only_the_missing_texts(cache: EmbeddingCache):
    first = CachingEmbedder(FakeEmbedder(), cache)
    first.encode_documents(texts_of(100))
    inner = FakeEmbedder()
    second = CachingEmbedder(inner, cache, chunk_size=7)
    out = second.encode_documents(texts_of(150))
    assert second.embedded == 50 and sorted(inner.seen) == sorted(texts_of(50, start=100))
    assert np.array_equal(out, np.stack([fake_vector(t) for t in texts_of(150)]))
    # Chunks go longest first, so the model's own batches stay homogeneous.
    lengths = [len(t) for t in inner.seen]
    assert lengths == sorted(lengths, reverse=True)


def test_queries_and_documents_use_separate_keys(cache: EmbeddingCache):
    emb = CachingEmbedder(FakeEmbedder(), cache)
    doc = emb.encode_documents(["same text"])
    query = emb.encode_queries(["same text"])
    assert not np.array_equal(doc, query)
    assert cache.count("fake-v1:document") == 1 and cache.count("fake-v1:query") == 1


def test_passes_through_the_embedder_protocol(cache: EmbeddingCache):
    inner = FakeEmbedder(fingerprint="abc")
    emb = CachingEmbedder(inner, cache)
    assert emb.name == "fake" and emb.fingerprint == "abc" and emb.max_tokens == 128
    assert emb.token_spans(["hello"]) == [[(0, 5)]]
    assert emb.encode_documents([]).shape[0] == 0


def test_a_changed_fingerprint_misses(cache: EmbeddingCache):
    CachingEmbedder(FakeEmbedder("v1"), cache).encode_documents(["a", "b"])
    other = CachingEmbedder(FakeEmbedder("v2"), cache)
    other.encode_documents(["a", "b"])
    assert other.embedded == 2


def test_lexical_embedder_bypasses_the_cache(cache: EmbeddingCache):
    lexical = LexicalEmbedder()
    emb = CachingEmbedder(lexical, cache, chunk_size=2)
    docs = ["The whale surfaced near the harbour.", "Bread rose in the oven.", "A quiet orchard."]
    matrix = emb.encode_documents(docs)
    queries = emb.encode_queries(["Which animal surfaced?"])
    assert sp.issparse(matrix) and matrix.shape[0] == 3 and sp.issparse(queries)
    reference = LexicalEmbedder()
    assert (matrix != reference.encode_documents(docs)).nnz == 0  # one fit on all documents
    assert cache.count() == 0 and emb.embedded == 0


class LateSparse(FakeEmbedder):
    """A sparse embedder the wrapper cannot recognise up front."""

    def _rows(self, texts: Sequence[str], kind: str) -> sp.csr_matrix:
        return sp.csr_matrix(super()._rows(texts, kind))


def test_a_sparse_result_switches_to_passthrough(cache: EmbeddingCache):
    emb = CachingEmbedder(LateSparse(), cache, chunk_size=2)
    out = emb.encode_documents(texts_of(5))
    assert sp.issparse(out) and out.shape == (5, DIM)
    assert np.array_equal(out.toarray(), np.stack([fake_vector(t) for t in texts_of(5)]))
    assert cache.count() == 0


def test_non_finite_rows_are_returned_but_not_stored(cache: EmbeddingCache):
    texts = ["fine one", "nan row", "fine two"]
    first = CachingEmbedder(NanEmbedder(), cache)
    out = first.encode_documents(texts)
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2]]).all()
    assert cache.count() == 2
    again = CachingEmbedder(NanEmbedder(), cache)
    again.encode_documents(texts)
    assert again.embedded == 1  # only the NaN row is retried


def test_an_inner_error_keeps_the_finished_chunks(cache: EmbeddingCache):
    class Failing(FakeEmbedder):
        def _rows(self, texts, kind):
            if self.calls == 3:
                raise RuntimeError("out of memory")
            return super()._rows(texts, kind)

    with pytest.raises(RuntimeError, match="out of memory"):
        CachingEmbedder(Failing(), cache, chunk_size=10).encode_documents(texts_of(100))
    assert cache.count() == 30


def test_a_wrong_shaped_inner_result_is_refused(cache: EmbeddingCache):
    class Short(FakeEmbedder):
        def _rows(self, texts, kind):
            return super()._rows(texts[:-1], kind)

    with pytest.raises(ValueError, match="shape"):
        CachingEmbedder(Short(), cache).encode_documents(["a", "b"])


# --- failures that must name the file and the fix ---------------------------------------


def test_a_file_of_random_bytes_is_a_cache_error(tmp_path: Path):
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(np.random.default_rng(7).bytes(8192))
    with pytest.raises(CacheError) as info:
        EmbeddingCache(path)
    message = str(info.value)
    assert str(path) in message and "delete" in message and "--niah-no-cache" in message


def test_a_damaged_database_is_a_cache_error(tmp_path: Path):
    path = tmp_path / "embeddings.sqlite"
    with EmbeddingCache(path) as cache:
        texts = texts_of(2000)
        cache.put_many("fp", texts, np.stack([fake_vector(t, dim=64) for t in texts]))
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[2 * page : len(data) - page] = np.random.default_rng(3).bytes(len(data) - 3 * page)
    path.write_bytes(bytes(data))
    with pytest.raises(CacheError) as info:
        EmbeddingCache(path)
    assert str(path) in str(info.value) and "delete" in str(info.value)


def test_an_unwritable_folder_is_a_cache_error(tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            # Root ignores permissions: a path under a regular file fails for everyone.
            (tmp_path / "afile").write_text("not a folder")
            path = tmp_path / "afile" / "cache.sqlite"
        else:
            path = locked / "cache.sqlite"
        with pytest.raises(CacheError) as info:
            EmbeddingCache(path)
        message = str(info.value)
        assert str(path.parent) in message and "--niah-cache-dir" in message
    finally:
        locked.chmod(0o700)


# --- two processes ----------------------------------------------------------------------


def _write_concurrently(path: str, start: int, barrier) -> int:
    barrier.wait()
    with EmbeddingCache(path, timeout=30) as cache:
        emb = CachingEmbedder(FakeEmbedder(delay=0.001), cache, chunk_size=16)
        texts = texts_of(600, start=start)
        out = emb.encode_documents(texts)
        assert np.array_equal(out, np.stack([fake_vector(t) for t in texts]))
        return emb.embedded


def test_two_processes_write_overlapping_texts(tmp_path: Path):
    path = tmp_path / "shared" / "embeddings.sqlite"  # created by whichever comes first
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(2)
        with ctx.Pool(2) as pool:
            results = [
                pool.apply_async(_write_concurrently, (str(path), start, barrier))
                for start in (0, 300)
            ]
            embedded = [r.get(timeout=120) for r in results]
    assert all(e <= 600 for e in embedded) and sum(embedded) >= 900
    with EmbeddingCache(path) as cache:
        assert cache.count() == 900
        assert cache.count("fake-v1:document") == 900
        texts = texts_of(900)
        found = cache.get_many("fake-v1:document", texts)
        assert len(found) == 900
        assert all(np.array_equal(found[i], fake_vector(t)) for i, t in enumerate(texts))
        conn = cache.connection
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_packaged_model_through_the_cache_is_warm_the_second_time(tmp_path: Path):
    from pytest_niah.embed.embedders import SentenceTransformerEmbedder

    texts = ["A whale surfaced.", "The orchard was quiet.", "Bread rose."]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        cold = CachingEmbedder(SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu"), cache)
        first = cold.encode_documents(texts)
        warm = CachingEmbedder(SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu"), cache)
        assert np.array_equal(warm.encode_documents(texts), first) and warm.embedded == 0
