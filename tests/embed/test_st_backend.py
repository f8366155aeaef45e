"""The sentence-transformers backend on the packaged models: windows, ids path, refusals.

Vectors built from token ids (the "ids path") must be the ones ``model.encode`` gives for the
same text; a window must be what the model really reads, not what it reports.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.lexical import LexicalEmbedder
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.model_options import ENGINE_OWNED
from pytest_niah.embed.models import is_model2vec_folder, resolve_model_name
from pytest_niah.embed.protocol import Embedder, Windows
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.st_backend import SentenceTransformerEmbedder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import ConfigError, EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, make_input


def vocabulary(text: str) -> list[str]:
    return text.split()


WORDS = vocabulary(
    "harbour keeper counted whales while bread rose in the quiet orchard near mill river "
    "lantern sailor winter market bell clock tower garden letter widow merchant rain"
)
TOPIC_B = vocabulary(
    "quantum processor firmware kernel compiler benchmark latency throughput register "
    "cache pipeline transistor voltage silicon wafer lithography"
)


def prose(words: list[str], count: int, seed: int) -> str:
    """Sentences of ``count`` words drawn from ``words``."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        word = rng.choice(words)
        out.append(word.capitalize() if i % 12 == 0 else word)
        if i % 12 == 11:
            out[-1] += "."
    return " ".join(out) + "."


SHORT = ["A whale surfaced.", "Which animal surfaced near the harbour?", "Hello world."]
LONG = [prose(WORDS, 300, 1), prose(WORDS, 1800, 2) + " " + prose(TOPIC_B, 400, 3)]


def model_inputs(
    embedder: SentenceTransformerEmbedder, texts: list[str], kind: str = DOCUMENT
) -> list[ModelInput]:
    window = embedder.windows.query if kind == QUERY else embedder.windows.document
    encodings = embedder.tokenizer.encode_batch(texts)
    return [
        make_input(kind, encoding, text, window, keep_text=True)
        for encoding, text in zip(encodings, texts, strict=True)
    ]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def embedder(name: str, **kwargs) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(name, device="cpu", **kwargs)


# -- the packaged models ----------------------------------------------------------------------


def test_packaged_aliases_resolve_to_the_wheel_folders():
    minilm = Path(resolve_model_name("packaged-minilm"))
    assert minilm.name == "model" and (minilm / "modules.json").is_file()
    static = Path(resolve_model_name("packaged-static"))
    assert is_model2vec_folder(static) and not is_model2vec_folder(minilm)


def test_minilm_is_an_embedder(minilm: SentenceTransformerEmbedder):
    assert isinstance(minilm, Embedder)
    assert minilm.windows == Windows(254, 254)  # a 256-token window minus [CLS] and [SEP]
    assert not minilm.reads_text and not minilm.fits_on_documents
    hello, empty = minilm.tokenizer.encode_batch(["Hello world.", ""])
    assert hello.offsets == [(0, 5), (6, 11), (11, 12)] and empty.ids == []
    assert minilm.tokenizer.identity == minilm.tokenizer.identity
    docs = minilm.encode(model_inputs(minilm, ["A whale surfaced.", "The orchard was quiet."]))
    queries = minilm.encode(model_inputs(minilm, ["Which animal surfaced?"], QUERY))
    assert docs.shape == (2, 384) and queries.shape == (1, 384)
    assert docs.dtype == np.float32 and np.isfinite(docs).all()
    assert minilm.encode([]).shape == (0, 0)


def test_encoding_is_deterministic(minilm: SentenceTransformerEmbedder):
    items = model_inputs(minilm, [SHORT[0], LONG[0]])
    assert np.array_equal(minilm.encode(items), minilm.encode(items))


@pytest.mark.parametrize("name", ["minilm", "static"])
@pytest.mark.parametrize("kind", [DOCUMENT, QUERY])
def test_the_ids_path_gives_model_encode_vectors(request, name, kind):
    model: SentenceTransformerEmbedder = request.getfixturevalue(name)
    items = model_inputs(model, [*SHORT, *LONG], kind)
    if name == "minilm":
        assert [i.tokens for i in items[-2:]] == [254, 254]  # the long ones are cut
    # The cut text is exactly the ids: encode() reads the same tokens from it.
    for item, encoding in zip(
        items, model.tokenizer.encode_batch([i.text for i in items]), strict=True
    ):
        assert encoding.ids == item.ids.tolist()
    ours = model.encode(items)
    theirs = model.model.encode([i.text for i in items], convert_to_numpy=True)
    assert cosines(ours, theirs).min() >= 0.9999
    assert not model.reads_text and model.notes == []  # no fallback to encode()


def test_packaged_static_reads_every_token(static: SentenceTransformerEmbedder):
    assert static.windows == Windows(None, None)
    assert math.isinf(static.model.max_seq_length)  # what sentence-transformers reports...
    long = LONG[1]
    encoding = static.tokenizer.encode_batch([long])[0]
    assert len(encoding.ids) >= 2000
    whole = make_input(DOCUMENT, encoding, long, None, keep_text=True)
    head = make_input(DOCUMENT, encoding, long, 512, keep_text=True)
    assert whole.tokens == len(encoding.ids) and head.tokens == 512
    ours = static.encode([whole, head])
    assert cosines(ours[:1], ours[1:])[0] < 0.99  # the tokens past 512 count
    theirs = static.model.encode([long, head.text], convert_to_numpy=True)
    assert cosines(ours, theirs).min() >= 0.9999


@pytest.mark.integration
def test_a_static_model_lends_its_tokenizer_and_others_get_a_copy(static, minilm):
    """A static model's own tokenizer never truncates (the engine switched that off) and no
    wrapper re-configures it, so haystacks read it as it is; MiniLM's is copied."""
    assert static.tokenizer._tokenizer is static.model[0].tokenizer
    assert minilm.tokenizer._tokenizer is not minilm.model.tokenizer.backend_tokenizer
    cut = embedder("packaged-static", max_seq_length=64)
    assert cut.model[0].tokenizer.truncation["max_length"] == 64  # its window
    assert cut.tokenizer._tokenizer is not cut.model[0].tokenizer  # haystacks: every token
    assert len(cut.tokenizer.encode_batch([LONG[1]])[0].ids) >= 2000


@pytest.mark.integration
def test_the_static_tokenizer_fixture_is_the_one_a_run_reads(static, static_tokenizer):
    """tests/conftest.py reads packaged-static's tokenizer.json without loading the model:
    the tokenizer a run builds haystacks with, to the byte, and it reads every token."""
    assert static_tokenizer.identity == static.tokenizer.identity
    assert static_tokenizer._tokenizer.to_str() == static.tokenizer._tokenizer.to_str()
    assert len(static_tokenizer.encode_batch([LONG[1]])[0].ids) >= 2000


def test_the_shipped_static_tokenizer_truncates_at_512():
    """...but its tokenizer cuts at 512: the engine must switch that off, not trust ``inf``."""
    from pytest_niah.embed.st_loading import static_embedding_class
    from pytest_niah.embed.static_memo import STATIC_MODELS

    source = resolve_model_name("packaged-static")  # as the engine loads it, before its checks
    module = STATIC_MODELS.load(source, Path(source), static_embedding_class())
    assert module.tokenizer.truncation["max_length"] == 512
    assert math.isinf(module.max_seq_length)


# -- static models saved elsewhere keep their tokenizer's window ----------------------------


@pytest.fixture(scope="module", params=["sentence-transformers-folder", "model2vec-folder"])
def saved_static(request, tmp_path_factory) -> SentenceTransformerEmbedder:
    """packaged-static saved as a sentence-transformers folder, or copied as it is."""
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.st_loading import static_embedding_class
    from pytest_niah.embed.static_memo import STATIC_MODELS

    folder = tmp_path_factory.mktemp("static") / "model"
    source = resolve_model_name("packaged-static")
    if request.param == "model2vec-folder":
        shutil.copytree(source, folder)
        assert is_model2vec_folder(folder)
    else:
        module = STATIC_MODELS.load(source, Path(source), static_embedding_class())  # cuts at 512
        SentenceTransformer(modules=[module], device="cpu").save(str(folder))
        saved = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        assert saved["truncation"]["max_length"] == 512
        assert (folder / "modules.json").is_file()
    return embedder(str(folder))


@pytest.mark.integration
def test_a_saved_static_model_reads_what_its_tokenizer_keeps(saved_static):
    assert saved_static.windows == Windows(512, 512)
    long = LONG[1]
    items = model_inputs(saved_static, [SHORT[0], long])
    assert items[1].tokens == 512
    ours = saved_static.encode(items)  # no "has no fast tokenizer" error
    assert ours.shape == (2, 64) and np.isfinite(ours).all()
    assert not saved_static.reads_text and saved_static.notes == []
    # The window is real: the model gives the whole text the vector of its first 512 tokens.
    theirs = saved_static.model.encode([SHORT[0], long], convert_to_numpy=True)
    assert cosines(ours, theirs).min() >= 0.9999
    assert saved_static.identity.parts["settings"]["reads_every_token"] is False


# -- prompts, windows and encode() arguments ------------------------------------------------


@pytest.fixture(scope="module")
def prompted() -> SentenceTransformerEmbedder:
    return embedder("packaged-minilm", doc_prompt="passage: ", max_seq_length=32)


def test_a_prompt_and_a_shorter_window_shrink_what_is_read(prompted):
    assert prompted.windows == Windows(30, 28)  # 32 - [CLS] [SEP]; "passage" ":" too
    items = model_inputs(prompted, [*SHORT, LONG[0]])
    assert items[-1].tokens == 28
    ours = prompted.encode(items)
    theirs = prompted.model.encode(
        [i.text for i in items], prompt="passage: ", convert_to_numpy=True
    )
    assert cosines(ours, theirs).min() >= 0.9999
    assert not prompted.reads_text and prompted.notes == []


def test_a_query_prompt_that_joins_its_text_sends_queries_through_encode():
    """``"find"`` + ``"me"`` is one word to encode() ("findme") but two in the ids path."""
    joined = embedder("packaged-minilm", query_prompt="find")
    assert joined.reads_text
    assert any("token ids give other vectors" in note for note in joined.notes)
    items = model_inputs(joined, ["me a fox"], kind=QUERY)
    ours = joined.encode(items)
    theirs = joined.model.encode(["me a fox"], prompt="find", convert_to_numpy=True)
    assert cosines(ours, theirs).min() >= 0.9999


def test_encode_kwargs_go_through_encode(minilm):
    truncated = embedder("packaged-minilm", encode_kwargs={"truncate_dim": 64})
    assert truncated.reads_text  # the ids path does not know truncate_dim: encode() does
    items = model_inputs(truncated, [SHORT[0], LONG[0]])
    ours = truncated.encode(items)
    assert ours.shape == (2, 64)
    full = minilm.model.encode([i.text for i in items], convert_to_numpy=True)
    assert cosines(ours, full[:, :64]).min() >= 0.9999


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("batch_size", 8),
        ("convert_to_numpy", False),
        ("output_value", "token_embeddings"),
        ("precision", "binary"),
        ("normalize_embeddings", True),
        ("prompt", "query: "),
        ("device", "cpu"),
    ],
)
def test_engine_owned_encode_kwargs_are_refused(key, value):
    with pytest.raises(ConfigError) as info:
        embedder("packaged-minilm", encode_kwargs={key: value})
    message = str(info.value)
    assert message.startswith(f"--niah-encode-kwargs: {key!r} is set by pytest-niah itself")
    assert f"Fix: remove it ({ENGINE_OWNED[key]})" in message


def test_an_unknown_encode_kwarg_is_refused_with_what_the_model_takes():
    unknown = embedder("packaged-minilm", encode_kwargs={"no_such_option": 1})
    with pytest.raises(ConfigError) as info:
        unknown.windows  # noqa: B018 - any use loads the model
    message = str(info.value)
    assert "--niah-encode-kwargs: model 'packaged-minilm' takes no 'no_such_option'" in message
    assert "Fix: remove it; this model's encode() accepts" in message
    assert "truncate_dim" in message


def test_a_window_past_the_position_embeddings_is_refused():
    with pytest.raises(ConfigError) as info:
        embedder("packaged-minilm", max_seq_length=100000).windows  # noqa: B018
    message = str(info.value)
    assert "--niah-max-seq-length=100000 is more than model 'packaged-minilm' can read" in message
    assert "position embeddings stop at 512" in message and "Fix: give at most 512" in message


# -- presets, remote code and names that cannot load --------------------------------------


def test_the_jina_preset_asks_for_the_study_adapter():
    jina = embedder("jinaai/jina-embeddings-v3", trust_remote_code=True)
    assert jina.encode_kwargs == {"task": "text-matching"}
    assert jina.trust_remote_code and any("text-matching" in note for note in jina.notes)
    custom = embedder(
        "jinaai/jina-embeddings-v3",
        trust_remote_code=True,
        encode_kwargs={"task": "retrieval.query"},
    )
    assert custom.encode_kwargs == {"task": "retrieval.query"}
    nomic = embedder("nomic-ai/nomic-embed-text-v1.5", query_prompt="q: ")
    assert (nomic.query_prompt, nomic.doc_prompt) == ("q: ", "search_document: ")


@pytest.mark.parametrize(
    ("name", "query", "document"),
    [
        ("intfloat/e5-large-v2", "query: ", "passage: "),
        ("Snowflake/snowflake-arctic-embed-l-v2.0", "query: ", ""),
        ("nomic-ai/nomic-embed-text-v2-moe", "search_query: ", "search_document: "),
        ("Qwen/Qwen3-Embedding-8B", "Instruct: ", ""),
    ],
)
def test_presets_give_each_model_its_prompts_by_name_and_say_so(name, query, document):
    model = embedder(name, trust_remote_code=True)
    assert model.query_prompt.startswith(query) and model.doc_prompt == document
    assert model.notes and model.notes[0].startswith(f"{name}: ")
    overridden = embedder(name, trust_remote_code=True, query_prompt="mine: ", doc_prompt="d: ")
    assert (overridden.query_prompt, overridden.doc_prompt) == ("mine: ", "d: ")


def test_every_preset_is_in_the_docs():
    from pytest_niah.embed.presets import MODEL_PRESETS

    page = Path(__file__).resolve().parents[2] / "docs" / "served-models.md"
    presets = page.read_text(encoding="utf-8").split("## Models with presets", 1)[1]
    assert [name for name in MODEL_PRESETS if f"`{name}`" not in presets] == []


def test_remote_code_is_never_run_unless_asked():
    with pytest.raises(EmbedderError, match="--niah-trust-remote-code"):
        embedder("jinaai/jina-embeddings-v3").model  # noqa: B018


def test_a_hub_model_offline_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbedderError) as info:
        embedder("pytest-niah-tests/no-such-model").model  # noqa: B018
    message = str(info.value)
    assert "pytest-niah-tests/no-such-model" in message
    assert "Fix:" in message and "offline" in message


def test_a_missing_local_path_is_a_clear_error(tmp_path: Path):
    with pytest.raises(EmbedderError, match="does not exist"):
        embedder(str(tmp_path / "nothing-here")).model  # noqa: B018


def test_a_folder_that_is_not_a_model_is_a_clear_error(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("not a model", encoding="utf-8")
    with pytest.raises(EmbedderError, match="holds no model"):
        embedder(str(tmp_path)).model  # noqa: B018


def test_a_broken_model_folder_names_the_folder_not_the_hub(tmp_path: Path):
    (tmp_path / "config.json").write_text('{"model_type": "no-such-type"}', encoding="utf-8")
    with pytest.raises(EmbedderError, match="could not load model") as info:
        embedder(str(tmp_path)).model  # noqa: B018
    assert f"the folder {str(tmp_path)!r} does not hold a model" in str(info.value)
    assert "offline" not in str(info.value)


def test_load_embedder_follows_the_config(tmp_path: Path):
    assert isinstance(load_embedder(NiahConfig(model="lexical:tfidf")), LexicalEmbedder)
    st = load_embedder(
        NiahConfig(
            model="packaged-minilm",
            device="cpu",
            doc_prompt="d: ",
            encode_kwargs={"truncate_dim": 64},
            max_seq_length=64,
        ),
        memo_dir=tmp_path,
    )
    assert isinstance(st, SentenceTransformerEmbedder)
    assert (st.doc_prompt, st.encode_kwargs, st.max_seq_length) == ("d: ", {"truncate_dim": 64}, 64)
    assert st.memo_dir == tmp_path and st.placement.devices == ("cpu",)


# -- through the encoder and the store ----------------------------------------------------


def test_texts_the_model_reads_alike_are_embedded_once(minilm, tmp_path: Path):
    """Haystacks that differ only past the window are one input; vectors are encode()'s."""
    book = prose(WORDS, 2000, 4)
    needle = "Actually, Yuki lives next to the Semper Opera House."
    cut = len(book) // 2  # far past the first 254 tokens
    texts = [book, book[:cut] + " " + needle + " " + book[cut:], needle, book[:cut] + " The end."]
    items = model_inputs(minilm, texts)
    assert items[0].key == items[1].key == items[3].key != items[2].key
    encoder = Encoder(minilm, None, budget=4096, batch_size=1)
    encoder.submit(items)
    table = encoder.finish()
    assert encoder.stats.embedded == 2 and encoder.stats.tokens == 254 + items[2].tokens
    ours = np.asarray(table.matrix)[table.rows([i.key for i in items])]
    theirs = minilm.model.encode(texts, convert_to_numpy=True)  # sentence-transformers cuts
    assert cosines(ours, theirs).min() >= 0.9999


def test_batching_does_not_change_the_vectors(minilm):
    texts = [*SHORT, *[prose(WORDS, n, n) for n in (5, 40, 90, 400, 400, 700)]]
    items = model_inputs(minilm, texts)
    vectors = []
    for budget, batch_size in ((4096, 1), (0, 1)):
        encoder = Encoder(minilm, None, budget=budget, batch_size=batch_size)
        encoder.submit(items)
        table = encoder.finish()
        vectors.append(np.asarray(table.matrix)[table.rows([i.key for i in items])])
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-5)


def test_the_packaged_model_through_the_store_is_warm_the_second_time(minilm, tmp_path: Path):
    items = model_inputs(minilm, [*SHORT, LONG[0]])
    with EmbeddingStore(tmp_path / CACHE_FILE) as store:
        cold = Encoder(minilm, store, budget=4096, batch_size=1)
        cold.submit(items)
        first = cold.finish()
        again = embedder("packaged-minilm")  # a new instance: the same identity, not loaded
        warm = Encoder(again, store, budget=4096, batch_size=1)
        warm.submit(items)
        second = warm.finish()
        assert "model" not in again.__dict__
    assert (cold.stats.embedded, warm.stats.embedded, warm.stats.read) == (4, 0, 4)
    keys = [i.key for i in items]
    assert first.matrix[first.rows(keys)].tobytes() == second.matrix[second.rows(keys)].tobytes()
