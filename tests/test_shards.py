"""Sharding: N jobs embed disjoint shares; the gate job measures byte-identical results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.batching import BatchShares
from pytest_niah.errors import ConfigError, ShardError
from pytest_niah.experiment import plan_inputs, run_experiment
from pytest_niah.experiment.shard_parts import read_part, write_part
from pytest_niah.experiment.shards import Shard, results_from_shards, run_shard
from pytest_niah.haystacks.plan import ModelInput


@pytest.fixture(scope="module")
def config(shared_corpus_dir: Path) -> NiahConfig:
    return NiahConfig(
        model="packaged-static",
        corpus=str(shared_corpus_dir),
        lengths=(128, 1024),
        positions=3,
        groups=("dietary-01", "location-02", "vehicle-01"),
        arms=("onehop", "literal"),
        scoring=("whole", "chunk-max"),
        bootstrap=200,
        device="cpu",
    )


@pytest.fixture(scope="module")
def unsharded(config: NiahConfig) -> str:
    # No cache: the results are measured, not read back from another test's run.
    return run_experiment(config, use_cache=False).without_speed().to_json()


@pytest.fixture(scope="module")
def sharded(config: NiahConfig, tmp_path_factory: pytest.TempPathFactory):
    """Folders of parts for N = 1, 2, 3, each job with its own (cold) cache."""
    folders = {}
    for count in (1, 2, 3):
        folder = tmp_path_factory.mktemp(f"parts-{count}")
        for index in range(1, count + 1):
            cache = tmp_path_factory.mktemp(f"cache-{count}-{index}")
            run_shard(config, Shard(index, count), folder, cache_dir=cache)
        folders[count] = folder
    return folders


@pytest.fixture
def no_model(monkeypatch):
    """Every model load fails the test: ``load_embedder`` wherever a module bound it."""
    import sys

    from pytest_niah.embed import loader

    real = loader.load_embedder

    def refuse(*args, **kwargs):
        raise AssertionError("the gate job loaded a model")

    for module in list(sys.modules.values()):
        ours = getattr(module, "__name__", "").startswith("pytest_niah")
        if ours and getattr(module, "load_embedder", None) is real:
            monkeypatch.setattr(module, "load_embedder", refuse)


def test_the_no_model_guard_fires_when_a_model_is_loaded(config, no_model):
    with pytest.raises(AssertionError, match="loaded a model"):
        run_experiment(config, cache_dir=None)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_sharded_results_are_byte_identical_to_an_unsharded_run(
    config, unsharded, sharded, count, no_model
):
    assert results_from_shards(config, sharded[count]).to_json() == unsharded


def test_each_input_is_embedded_by_exactly_one_job_in_whole_batches(sharded):
    parts = [read_part(p) for p in sorted(sharded[3].glob("part-*.npz"))]
    keys = [set(p.keys) for p in parts]
    assert all(keys) and not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    tokens = parts[0].manifest["layout"]["plan"]["tokens"]
    assert set().union(*keys) == set(tokens)
    plan = sorted(tokens)
    batches = [[plan[p] for p in batch] for part in parts for batch in part.batches]
    assert sorted(k for batch in batches for k in batch) == sorted(tokens)
    weight = [sum(tokens[k] for k in batch) for batch in batches]
    loads = [sum(tokens[k] for k in share) for share in keys]
    assert max(loads) - min(loads) <= max(weight)  # balanced by tokens, to within a batch


def batch_of(tokens: int, count: int = 1) -> list[ModelInput]:
    ids = np.zeros(tokens, dtype=np.int64)
    return [ModelInput(f"{tokens}-{i}", "document", ids, "") for i in range(count)]


def test_batches_are_dealt_to_the_job_with_the_fewest_tokens_ties_to_the_lower():
    hands = BatchShares(2)
    owners = [hands.owner(batch_of(n)) for n in (900, 100, 100, 100, 500, 400, 30)]
    assert owners == [0, 1, 1, 1, 1, 1, 0]
    assert hands.load == [930, 1200]
    three = BatchShares(3)
    assert [three.owner(batch_of(5, 2)) for _ in range(4)] == [0, 1, 2, 0]


@pytest.mark.parametrize("value", ["0/2", "3/2", "2", "a/b", "1/0", ""])
def test_a_bad_shard_is_a_usage_error_naming_the_value(value):
    with pytest.raises(ConfigError, match="K/N"):
        Shard.parse(value)


def test_shard_parsing():
    assert Shard.parse(" 2/ 3") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"
    assert Shard(2, 3).file_name == "part-002-of-003.npz"


def gathered(sharded, tmp_path: Path, count: int = 3) -> Path:
    folder = tmp_path / "parts"
    shutil.copytree(sharded[count], folder)
    return folder


def test_a_missing_part_is_named(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    (folder / "part-002-of-003.npz").unlink()
    with pytest.raises(ShardError, match=r"lacks 1 of 3 parts \(part-002-of-003.npz\)"):
        results_from_shards(config, folder)


def test_a_folder_without_parts_is_named(config, tmp_path):
    with pytest.raises(ShardError, match=f"no part files.*{tmp_path.name}"):
        results_from_shards(config, tmp_path)


def test_a_part_of_another_shard_count_is_named(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    shutil.copy(sharded[2] / "part-001-of-002.npz", folder)
    mixed = r"part-001-of-00[23]\.npz is part of [23] jobs but part-001-of-00[23]\.npz of [23]"
    with pytest.raises(ShardError, match=mixed):
        results_from_shards(config, folder)


def test_a_duplicated_part_is_named(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    part = read_part(folder / "part-001-of-003.npz")
    write_part(folder / "part-001-of-003.npz.npz", part.manifest, part.keys, part.vectors)
    (folder / "part-001-of-003.npz.npz").rename(folder / "part-01-of-003.npz")
    with pytest.raises(ShardError, match="shard 1/3 appears twice"):
        results_from_shards(config, folder)


def test_a_foreign_part_is_named(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    part = read_part(folder / "part-003-of-003.npz")
    manifest = json.loads(json.dumps(part.manifest))
    manifest["config"]["seed"] = 7
    write_part(folder / "part-003-of-003.npz", manifest, part.keys, part.vectors)
    with pytest.raises(ShardError, match=r"part-003-of-003.npz comes from another run.*seed"):
        results_from_shards(config, folder)


def test_a_part_holding_another_share_is_named(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    part = read_part(folder / "part-002-of-003.npz")
    write_part(folder / "part-002-of-003.npz", part.manifest, part.keys[1:], part.vectors[1:])
    with pytest.raises(ShardError, match=r"part-002-of-003\.npz holds other inputs"):
        results_from_shards(config, folder)


def test_a_damaged_part_is_named(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    (folder / "part-001-of-003.npz").write_bytes(b"not a zip")
    with pytest.raises(ShardError, match=r"part-001-of-003\.npz is not a readable"):
        results_from_shards(config, folder)


def test_other_options_in_the_gate_job_are_refused_naming_them(config, sharded):
    other = NiahConfig(**(config.to_dict() | {"bootstrap": 100}))
    with pytest.raises(ShardError, match="bootstrap: 100 here, 200 in the parts"):
        results_from_shards(other, sharded[2])


def test_the_lexical_baseline_cannot_be_sharded(shared_corpus_dir, tmp_path):
    config = NiahConfig(model="lexical:tfidf", corpus=str(shared_corpus_dir), lengths=(128,))
    with pytest.raises(ConfigError, match="cannot be split"):
        run_shard(config, Shard(1, 2), tmp_path)


def test_vectors_in_a_part_are_the_model_s(config, sharded):
    part = read_part(sharded[1] / "part-001-of-001.npz")
    assert part.vectors.dtype == np.float32 and part.vectors.shape[0] == len(part.keys)
    assert np.isfinite(part.vectors).all()


# -- caches: a shard job keeps exactly what a whole run keeps ----------------------------------


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_without_the_cache_a_shard_job_writes_into_the_cache_folder_what_a_whole_run_does(
    config, tmp_path
):
    # Found: a shard job with use_cache off still wrote sentence token counts (and model
    # file hashes) under the cache root; a whole run wrote nothing there. Neither may.
    whole, shard = tmp_path / "whole-cache", tmp_path / "shard-cache"
    whole.mkdir(), shard.mkdir()
    run_experiment(config, cache_dir=whole, use_cache=False)
    run_shard(config, Shard(1, 2), tmp_path / "parts", cache_dir=shard, use_cache=False)
    assert files_under(whole) == files_under(shard) == []


def test_with_the_cache_a_shard_job_keeps_what_a_whole_run_keeps(config, tmp_path):
    whole, shard = tmp_path / "whole-cache", tmp_path / "shard-cache"
    run_experiment(config, cache_dir=whole)
    run_shard(config, Shard(1, 1), tmp_path / "parts", cache_dir=shard)
    kept = files_under(shard)
    assert "embeddings.sqlite" in kept and any(k.startswith("sentence-counts") for k in kept)
    # The whole run also keeps its finished results; nothing else differs.
    assert [k for k in files_under(whole) if not k.startswith("results")] == kept


def test_no_cache_dir_is_the_default_root_for_every_kind_of_run(config, tmp_path, monkeypatch):
    # Found (#34.3): cache_dir=None was the default root for run_experiment but no cache at
    # all for run_shard and plan_inputs. Each now keeps under $NIAH_CACHE_DIR what it keeps
    # under a root it is given.
    kept = {}
    calls = {
        "whole": lambda: run_experiment(config),
        "shard": lambda: run_shard(config, Shard(1, 1), tmp_path / "parts"),
        "plan": lambda: plan_inputs(config),
    }
    for name, call in calls.items():
        monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / name))
        call()
        kept[name] = files_under(tmp_path / name) if (tmp_path / name).is_dir() else []
    assert "embeddings.sqlite" in kept["shard"]
    assert [k for k in kept["whole"] if not k.startswith("results")] == kept["shard"]
    assert "embeddings.sqlite" in kept["plan"]  # the window probe's texts
    # And use_cache=False is no cache, for a plan as for a run.
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "off"))
    plan_inputs(config, use_cache=False)
    assert not (tmp_path / "off").exists() or files_under(tmp_path / "off") == []


# -- damaged parts (issue 23): refused, naming the file ----------------------------------------


def write_raw(path: Path, manifest: dict, keys, vectors) -> None:
    """A part file written as is: the manifest (and its rows' digest) kept unchanged."""
    with path.open("wb") as stream:
        np.savez(
            stream,
            manifest=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8),
            keys=np.asarray(list(keys), dtype="U64"),
            vectors=np.asarray(vectors, dtype=np.float32),
        )


def test_an_empty_part_is_named_not_a_traceback(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    (folder / "part-002-of-003.npz").write_bytes(b"")
    with pytest.raises(ShardError, match=r"part-002-of-003\.npz is not a readable") as info:
        results_from_shards(config, folder)
    assert info.value.hint  # with its fix


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_part_with_a_vector_that_is_not_finite_is_refused(config, sharded, tmp_path, bad):
    folder = gathered(sharded, tmp_path)
    part = read_part(folder / "part-001-of-003.npz")
    vectors = part.vectors.copy()
    vectors[len(vectors) // 2, 0] = bad
    write_part(folder / "part-001-of-003.npz", part.manifest, part.keys, vectors)
    with pytest.raises(ShardError, match=r"part-001-of-003\.npz holds 1 vector.*NaN or infinite"):
        results_from_shards(config, folder)


@pytest.mark.parametrize("change", ["swap two rows", "swap two keys", "change a value"])
def test_a_part_whose_vectors_no_longer_match_its_keys_is_refused(
    config, sharded, tmp_path, change
):
    folder = gathered(sharded, tmp_path)
    path = folder / "part-002-of-003.npz"
    part = read_part(path)
    keys, vectors = list(part.keys), part.vectors.copy()
    if change == "swap two rows":
        vectors[[0, 1]] = vectors[[1, 0]]
    elif change == "swap two keys":
        keys[0], keys[1] = keys[1], keys[0]
    else:
        vectors[0, 0] += 1e-3
    write_raw(path, part.manifest, keys, vectors)
    with pytest.raises(ShardError, match=r"part-002-of-003\.npz: its vectors do not match its"):
        results_from_shards(config, folder)


def test_an_unchanged_part_rewritten_as_is_is_accepted(config, sharded, unsharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    for path in folder.glob("part-*.npz"):
        part = read_part(path)
        write_raw(path, part.manifest, part.keys, part.vectors)
    assert results_from_shards(config, folder).to_json() == unsharded


def test_parts_whose_vectors_differ_in_width_are_refused(config, sharded, tmp_path):
    folder = gathered(sharded, tmp_path)
    part = read_part(folder / "part-003-of-003.npz")
    write_part(folder / "part-003-of-003.npz", part.manifest, part.keys, part.vectors[:, :-1])
    with pytest.raises(ShardError, match=r"vectors differ in width .*part-003-of-003\.npz"):
        results_from_shards(config, folder)
