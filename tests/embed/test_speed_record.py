"""The speed record: per length, the tokens the model embedded and the model time they took.

Runs the packaged static model (every token read) on two groups at 128 and 256 tokens, so
each haystack input holds exactly its length in tokens. Inputs served from the embedding
cache take no model time and count neither way; a served model's requests give p50/p95.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_server import EmbeddingServer

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.experiment import RunReport, run_experiment
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.speed_record import length_speed, request_latency

pytest.importorskip("static_model")

LENGTHS = (128, 256)
GRID = {
    "groups": ("dietary-01", "location-01"),
    "lengths": LENGTHS,
    "positions": 2,
    "arms": ("onehop",),
    "bootstrap": 0,
}


def config(model: str = "packaged-static", **changes: object) -> NiahConfig:
    return NiahConfig(**({"model": model} | GRID | changes))  # type: ignore[arg-type]


def haystacks(results: NiahResults, length: int) -> int:
    """Distinct haystacks of one length: needle haystacks (not repeats) and controls."""
    needles = {c.id for c in results.cases if c.length == length and c.duplicate_of is None}
    controls = {i for n in results.negatives if n.length == length for i in n.control_ids}
    return len(needles) + len(controls)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, static) -> tuple[NiahResults, Path]:
    """A run with an empty cache: the model (loaded once per session) embeds every input."""
    cache = tmp_path_factory.mktemp("speed-cache")
    results = run_experiment(config(), embedder=static, cache_dir=cache, progress=False, speed=True)
    return results, cache


def test_every_length_records_the_tokens_of_its_haystacks_and_a_finite_speed(fresh):
    results, _ = fresh
    assert results.speed is not None
    assert [entry.length for entry in results.speed.lengths] == list(LENGTHS)
    for entry in results.speed.lengths:
        assert entry.inputs == haystacks(results, entry.length) > 0
        assert entry.cached == 0 and entry.note is None
        assert entry.tokens == entry.inputs * entry.length  # the static model reads every token
        assert entry.seconds > 0
        assert entry.tokens_per_second is not None and math.isfinite(entry.tokens_per_second)
        assert entry.tokens_per_second == pytest.approx(entry.tokens / entry.seconds)
    assert results.speed.latency is None  # a local model sends no requests


def test_inputs_read_from_the_embedding_cache_do_not_count(fresh, static):
    first, cache = fresh
    # Another results key (bootstrap), the same inputs: every one is read from the cache.
    warm = run_experiment(
        config(bootstrap=10), embedder=static, cache_dir=cache, progress=False, speed=True
    )
    assert warm.speed is not None
    for entry in warm.speed.lengths:
        assert entry.cached == entry.inputs > 0
        assert (entry.tokens, entry.seconds, entry.tokens_per_second) == (0, 0.0, None)
        assert "read from the embedding cache" in (entry.note or "")
    # 128 is cached, 512 is new: only 512 has a speed, from its own tokens.
    mixed = run_experiment(
        config(lengths=(128, 512)), embedder=static, cache_dir=cache, progress=False, speed=True
    )
    assert mixed.speed is not None
    at128, at512 = mixed.speed.at(128), mixed.speed.at(512)
    assert at128 is not None and at128.tokens_per_second is None
    assert at512 is not None and at512.cached == 0 and at512.tokens == at512.inputs * 512
    assert at512.tokens_per_second is not None and at512.tokens_per_second > 0
    # The verdicts do not see any of it: same cases at 128 as the cold run.
    assert [c.found for c in mixed.cases if c.length == 128] == [
        c.found for c in first.cases if c.length == 128
    ]


def test_reused_results_keep_the_speed_measured_when_they_were_computed(fresh, static):
    first, cache = fresh
    report = RunReport()
    again = run_experiment(
        config(), embedder=static, cache_dir=cache, progress=False, report=report, speed=True
    )
    assert report.reused
    assert again.speed == first.speed


def test_speed_is_left_out_of_what_is_compared_and_round_trips(fresh, tmp_path):
    results, _ = fresh
    loaded = NiahResults.from_json(results.to_json())
    assert loaded.speed == results.speed
    assert results.without_speed().speed is None
    assert results.without_speed().cases == results.cases
    assert json.loads(results.without_speed().to_json())["speed"] is None


def test_a_version_2_results_file_still_loads_without_a_speed_record(fresh, tmp_path):
    results, _ = fresh
    data = results.to_dict()
    del data["speed"]
    data["schema_version"] = 2
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    old = NiahResults.load(path)
    assert old.speed is None and old.cases == results.cases
    assert old.schema_version == 3  # read as the current version without what it lacked


def test_the_entry_of_a_length_without_model_time_has_no_speed_and_says_why():
    assert length_speed(128, inputs=0, cached=0, tokens=0, seconds=0.0).note == (
        "no haystack inputs of this length were planned"
    )
    partial = length_speed(128, inputs=4, cached=1, tokens=384, seconds=0.5)
    assert partial.tokens_per_second == 768.0
    assert partial.note == "1 of 4 inputs read from the cache; speed of the 3 embedded"
    assert length_speed(128, inputs=2, cached=0, tokens=256, seconds=0.0).tokens_per_second is None


def test_latency_percentiles_are_nearest_rank():
    assert request_latency([]) is None
    latency = request_latency([float(n) for n in range(20, 0, -1)])
    assert latency is not None
    assert (latency.requests, latency.p50_seconds, latency.p95_seconds) == (20, 10.0, 19.0)


# -- a served model ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[EmbeddingServer]:
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    folder = packaged_folder("packaged-minilm")
    assert folder is not None
    server = EmbeddingServer(SentenceTransformer(str(folder), device="cpu")).start()
    yield server
    server.stop()


@pytest.mark.integration
def test_a_served_model_records_request_latency_p50_and_p95(served, tmp_path, monkeypatch):
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    monkeypatch.setenv("NIAH_TEST_API_KEY", "sk-test")
    served.reset()
    embedder = RemoteEmbedder(
        served.model_name(),
        tokenizer="packaged-minilm",
        api_key_env="NIAH_TEST_API_KEY",
        batch_size=4,
        timeout=30.0,
    )
    try:
        results = run_experiment(
            config(served.model_name(), lengths=(128,), groups=("dietary-01",)),
            embedder=embedder,
            cache_dir=tmp_path,
            progress=False,
            speed=True,
        )
    finally:
        embedder.close()
    assert results.speed is not None
    latency = results.speed.latency
    assert latency is not None and latency.requests >= 2
    assert 0 < latency.p50_seconds <= latency.p95_seconds < 30
    entry = results.speed.at(128)
    assert entry is not None and entry.tokens_per_second is not None


def test_without_speed_asked_for_results_hold_none_even_when_reused(fresh, static, tmp_path):
    """Off by default: two runs of one config give identical bytes."""
    first, cache = fresh
    assert first.speed is not None
    reused = run_experiment(config(), embedder=static, cache_dir=cache, progress=False)
    assert reused.speed is None  # a cached result that holds a speed record drops it
    cold = [
        run_experiment(config(), embedder=static, cache_dir=tmp_path / str(i), progress=False)
        for i in range(2)
    ]
    assert cold[0].speed is None
    assert cold[0].to_json() == cold[1].to_json() == reused.to_json()
