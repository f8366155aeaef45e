from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.embedders import (
    PACKAGED_MINILM,
    Embedder,
    EmbedderError,
    LexicalEmbedder,
    SentenceTransformerEmbedder,
    load_embedder,
    pick_device,
    resolve_model_name,
)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu")


def test_packaged_alias_resolves_to_the_wheel_folder():
    path = resolve_model_name(PACKAGED_MINILM)
    assert path.endswith("model")
    assert (__import__("pathlib").Path(path) / "modules.json").is_file()


def test_minilm_is_a_real_embedder(minilm):
    assert isinstance(minilm, Embedder)
    # 256-token window minus [CLS] and [SEP].
    assert minilm.max_tokens == 254
    spans = minilm.token_spans(["Hello world.", ""])
    assert spans == [[(0, 5), (6, 11), (11, 12)], []]
    docs = minilm.encode_documents(["A whale surfaced.", "The orchard was quiet."])
    queries = minilm.encode_queries(["Which animal surfaced?"])
    assert docs.shape == (2, 384) and queries.shape == (1, 384)
    assert docs.dtype == np.float32 and np.isfinite(docs).all()


def test_encoding_is_deterministic(minilm):
    texts = ["One sentence about a harbour.", "Another about bread." * 40]
    assert np.array_equal(minilm.encode_documents(texts), minilm.encode_documents(texts))


def test_fingerprint_is_stable_and_tracks_what_changes_embeddings(minilm):
    same = SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu")
    assert minilm.fingerprint == same.fingerprint
    prompted = SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu", doc_prompt="passage: ")
    assert prompted.fingerprint != minilm.fingerprint
    shorter = SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu", max_seq_length=32)
    assert shorter.fingerprint != minilm.fingerprint


def test_prompts_and_window_override_shrink_the_readable_tokens():
    prompted = SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu", doc_prompt="passage: ")
    assert prompted.max_tokens == 254 - 2  # "passage" and ":"
    short = SentenceTransformerEmbedder(PACKAGED_MINILM, device="cpu", max_seq_length=32)
    assert short.max_tokens == 30


def test_jina_preset_asks_for_the_study_adapter_and_remote_code():
    jina = SentenceTransformerEmbedder("jinaai/jina-embeddings-v3", trust_remote_code=True)
    assert jina.encode_kwargs == {"task": "text-matching"}
    assert jina.load_kwargs()["trust_remote_code"] is True
    custom = SentenceTransformerEmbedder(
        "jinaai/jina-embeddings-v3",
        trust_remote_code=True,
        encode_kwargs={"task": "retrieval.query"},
    )
    assert custom.encode_kwargs == {"task": "retrieval.query"}


def test_remote_code_is_never_run_unless_asked():
    jina = SentenceTransformerEmbedder("jinaai/jina-embeddings-v3")
    with pytest.raises(EmbedderError, match="--niah-trust-remote-code"):
        jina.model  # noqa: B018


def test_hub_model_offline_gives_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    missing = SentenceTransformerEmbedder("pytest-niah-tests/no-such-model", device="cpu")
    with pytest.raises(EmbedderError) as info:
        missing.model  # noqa: B018
    message = str(info.value)
    assert "pytest-niah-tests/no-such-model" in message
    assert "Fix:" in message and "offline" in message


def test_missing_local_path_is_a_clear_error(tmp_path):
    missing = SentenceTransformerEmbedder(str(tmp_path / "nothing-here"))
    with pytest.raises(EmbedderError, match="does not exist"):
        missing.model  # noqa: B018


def test_a_folder_that_is_not_a_model_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model", encoding="utf-8")
    with pytest.raises(EmbedderError, match="holds no model"):
        SentenceTransformerEmbedder(str(tmp_path), device="cpu").model  # noqa: B018


def test_a_broken_model_folder_names_the_folder_not_the_hub(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "no-such-type"}', encoding="utf-8")
    with pytest.raises(EmbedderError, match="could not load model") as info:
        SentenceTransformerEmbedder(str(tmp_path), device="cpu").model  # noqa: B018
    assert f"the folder {str(tmp_path)!r} does not hold a model" in str(info.value)
    assert "offline" not in str(info.value)


def test_device_auto_is_cpu_here_and_cuda_must_exist():
    import torch

    if not torch.cuda.is_available():
        assert pick_device("auto") in {"cpu", "mps"}
        with pytest.raises(EmbedderError, match="no CUDA GPU"):
            pick_device("cuda")
    assert pick_device("cpu") == "cpu"


def test_load_embedder_follows_the_config():
    lexical = load_embedder(NiahConfig(model="lexical:tfidf"))
    assert isinstance(lexical, LexicalEmbedder)
    st = load_embedder(
        NiahConfig(model=PACKAGED_MINILM, batch_size=4, doc_prompt="d: ", encode_kwargs={"x": 1})
    )
    assert isinstance(st, SentenceTransformerEmbedder)
    assert (st.batch_size, st.doc_prompt, st.encode_kwargs) == (4, "d: ", {"x": 1})


def test_lexical_baseline_needs_documents_first_and_is_sparse():
    lexical = LexicalEmbedder()
    with pytest.raises(EmbedderError, match="documents before the queries"):
        lexical.encode_queries(["Which character rows?"])
    docs = lexical.encode_documents(["Yuki rows a boat daily.", "Bread rises slowly."])
    query = lexical.encode_queries(["Which character rows a boat?"])
    assert docs.shape[0] == 2 and query.shape[0] == 1
    scores = (query @ docs.T).toarray().ravel()
    assert scores[0] > scores[1] == 0.0
    assert lexical.max_tokens is None
    with pytest.raises(EmbedderError, match="lexical:tfidf"):
        LexicalEmbedder("bm99")


def test_long_texts_embed_exactly_as_sentence_transformers_truncates_them(minilm, shared_corpus):
    """Long texts go to the model as prefixes (less tokenizing); the vectors must not change."""
    book = shared_corpus.books[0].text
    texts = [
        book[:40_000],  # ~9K tokens: sent as a prefix
        book[1000:4000],  # just over the prefix length
        "word " * 3000,  # long but cheap to tokenize: a prefix
        "x" * 20_000,  # one "word": the prefix holds too few tokens, kept whole
        "A short text.",
    ]
    sent, counts, keys = minilm._prepare(texts, "")
    assert len(set(keys)) == len(texts)
    assert len(sent[0]) < len(texts[0]) and len(sent[2]) < len(texts[2])
    assert sent[3] is texts[3] and sent[4] is texts[4]
    assert counts[:3] == [256, 256, 256] and counts[4] == 6
    plain = minilm.model.encode(texts, batch_size=2, convert_to_numpy=True)
    ours = minilm.encode_documents(texts)
    np.testing.assert_allclose(ours, plain, atol=2e-6)


def test_texts_the_model_reads_alike_are_encoded_once(minilm, shared_corpus):
    """Two long haystacks that differ only past the window are one model input."""
    book = shared_corpus.books[1].text[:20_000]
    needle = " Actually, Yuki lives next to the Semper Opera House. "
    cut = len(book) // 2  # far past the first 256 tokens
    texts = [book, book[:cut] + needle + book[cut:], needle.strip(), book[:cut] + " The end."]
    _, _, keys = minilm._prepare(texts, "")
    assert keys[0] == keys[1] == keys[3] != keys[2]
    calls = []
    real = minilm._encode_inputs
    minilm._encode_inputs = lambda ts, cs, p: calls.append(len(ts)) or real(ts, cs, p)
    try:
        ours = minilm.encode_documents(texts)
    finally:
        del minilm._encode_inputs
    assert calls == [2]
    plain = minilm.model.encode(texts, batch_size=1, convert_to_numpy=True)
    np.testing.assert_allclose(ours, plain, atol=2e-6)
