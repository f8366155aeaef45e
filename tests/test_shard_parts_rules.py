"""Rules of experiment/shard_parts.py that mutants found unchecked (parts made here, no run)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.batching import BatchShares
from pytest_niah.embed.server_fingerprint import ServerFingerprint
from pytest_niah.errors import ConfigError, ShardError
from pytest_niah.experiment.shard_parts import (
    PART_SCHEMA,
    Part,
    Shard,
    read_part,
    same_served_run,
    write_part,
)
from pytest_niah.experiment.shards import results_from_shards
from pytest_niah.haystacks.plan import ModelInput

ROWS = ((1.0, 0.0), (0.0, 1.0))


def _part(index: int, seed: int, fingerprint: ServerFingerprint | None, answers: str) -> Part:
    model = {"fingerprint": answers, "identity": {"source": {"answers": answers}}}
    manifest = {"config": {"seed": seed}, "layout": {"model": model}}
    if fingerprint is not None:
        manifest["server"] = asdict(fingerprint)
    return Part(Path(f"part-{index}"), Shard(index, 2), manifest, [], np.zeros((0, 2)))


def test_parts_of_a_noisy_server_are_one_run_only_when_all_else_is_the_same():
    # Found (mutation, shard_parts.py:141 `or` -> `and`): matching fingerprints make two
    # parts one run only if everything but the answers key is the same, and both have one.
    fingerprint = ServerFingerprint(None, 64, "no limit within 64 tokens", 1e-3, ROWS)
    one, two = _part(1, 1, fingerprint, "a"), _part(2, 1, fingerprint, "b")
    assert same_served_run(one, two)
    assert same_served_run(one, _part(2, 2, fingerprint, "b")) is False  # another seed
    assert not same_served_run(one, _part(2, 1, None, "b"))  # no fingerprint
    assert not same_served_run(_part(1, 1, None, "a"), two)


def part_manifest(index: int, count: int, answers: str = "m") -> dict:
    """A part's manifest: schema, shard, config and the model's answers' fingerprint."""
    return {
        "part_schema": PART_SCHEMA,
        "shard": [index, count],
        "config": {"seed": 1},
        "layout": {"plan": {"tokens": {}}, "model": {"fingerprint": answers}},
        "batches": [],
    }


def _written(folder: Path, index: int, fingerprint: ServerFingerprint | None, answers: str):
    manifest = part_manifest(index, 2, answers)
    if fingerprint is not None:
        manifest["server"] = asdict(fingerprint)
    write_part(folder / f"part-{index:03d}-of-002.npz", manifest, [], np.zeros((0, 2)))


def test_parts_of_a_served_model_and_of_another_are_named_not_a_traceback(tmp_path: Path):
    # Found (mutation, shards.py:238 `theirs is not None` dropped): the first part measured
    # a server, the second did not (another model): the refusal names the model identity.
    fingerprint = ServerFingerprint(None, 64, "no limit within 64 tokens", 1e-3, ROWS)
    _written(tmp_path, 1, fingerprint, "served-model")
    _written(tmp_path, 2, None, "local-model")
    with pytest.raises(ShardError, match=r"comes from another run .*\(model identity local-model"):
        results_from_shards(NiahConfig(model="packaged-static"), tmp_path)


def test_a_part_with_fewer_vectors_than_keys_is_named_not_a_traceback(tmp_path: Path):
    # Found (mutation, shard_parts.py:182, the count check deleted): a part written with three
    # keys and two vectors has a digest that matches what it holds; without the check, the
    # rows were reshaped to one per key and failed with a traceback.
    manifest = part_manifest(1, 2)
    path = tmp_path / "part-001-of-002.npz"
    write_part(path, manifest, ["a", "b", "c"], np.ones((2, 2)))
    with pytest.raises(ShardError, match=r"part-001-of-002\.npz holds 3 keys but 2 vectors"):
        read_part(path)


def test_an_input_of_one_token_weighs_one_token_in_the_deal():
    # Found (mutation, `max(tokens, 1)` -> `max(tokens, 2)`): only an empty batch is counted
    # as one token; a one-token batch weighs what it holds, so two of them balance one batch
    # of two tokens.
    def deal(*sizes: int) -> list[int]:
        hands = BatchShares(2)
        return [hands.owner([_input(n)]) for n in sizes]

    assert deal(2, 1, 1) == [0, 1, 1]
    assert deal(2, 0, 0, 1) == [0, 1, 1, 0]


def _input(tokens: int) -> ModelInput:
    ids = np.arange(tokens, dtype=np.int64)
    return ModelInput(f"k{tokens}", "document", ids, "")


def test_parts_written_with_their_batches_are_schema_3_and_those_before_it_are_refused(
    tmp_path: Path,
):
    # Found (mutation, PART_SCHEMA 3 -> 4): the number changes only with the part format;
    # schema 3 added the part's batches, and parts of schema 2 (without them) are refused by
    # name, not misread.
    manifest = {"shard": [1, 1], "config": {}, "layout": {"plan": {"tokens": {}}}, "batches": []}
    path = tmp_path / "part-001-of-001.npz"
    write_part(path, {**manifest, "part_schema": 3}, ["a"], np.eye(1))
    assert read_part(path).manifest["part_schema"] == 3
    write_part(path, {**manifest, "part_schema": 2}, ["a"], np.eye(1))
    with pytest.raises(ShardError, match=r"part schema 2, this one reads 3\)"):
        read_part(path)


def test_the_run_a_part_belongs_to_does_not_depend_on_its_manifests_key_order(tmp_path: Path):
    # Found (mutation, shard_parts.py:111 and :124 sort_keys dropped): a manifest read from
    # a part (or edited by hand) may hold its keys in any order; the same config and layout
    # are the same run.
    layout = {"model": {"identity": {"source": {"kind": "files"}}}, "plan": {"tokens": {"a": 1}}}
    config = {"model": "m", "lengths": [128]}
    flipped_layout = {
        "plan": {"tokens": {"a": 1}},
        "model": {"identity": {"source": {"kind": "files"}}},
    }
    flipped_config = {"lengths": [128], "model": "m"}

    def part(config: dict, layout: dict) -> Part:
        manifest = {"config": config, "layout": layout}
        return Part(tmp_path / "p.npz", Shard(1, 1), manifest, [], np.zeros((0, 0)))

    one, other = part(config, layout), part(flipped_config, flipped_layout)
    assert one.layout_digest == other.layout_digest
    assert one.unpinned_digest == other.unpinned_digest


def test_a_shard_and_a_part_read_are_values_that_cannot_change(tmp_path: Path):
    # Found (mutation, shard_parts.py:34 and :97 frozen dropped).
    import dataclasses

    shard = Shard(1, 2)
    part = Part(tmp_path / "p.npz", shard, {}, [], np.zeros((0, 0)))
    assert {shard: "a"}[Shard(1, 2)] == "a"
    with pytest.raises(dataclasses.FrozenInstanceError):
        shard.index = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.keys = ["a"]  # type: ignore[misc]


def test_a_part_schema_written_as_a_float_is_refused_though_it_equals_3(tmp_path: Path):
    # Found (mutation, shard_parts.py:166 the whole-number clause dropped): 3.0 == 3 in
    # Python, but a part schema is a whole number; a hand-edited 3.0 is another format.
    path = tmp_path / "part-001-of-001.npz"
    manifest = {"shard": [1, 1], "config": {}, "layout": {"plan": {"tokens": {}}}, "batches": []}
    write_part(path, {**manifest, "part_schema": 3.0}, ["a"], np.eye(1))
    with pytest.raises(ShardError, match=r"part schema 3\.0, not a whole number"):
        read_part(path)


def test_a_part_that_cannot_be_written_is_an_output_error_naming_it(tmp_path: Path):
    # Found (mutation, shard_parts.py:83 the raise deleted, :84 the reason's stand-in): a
    # shard folder that cannot be made (a file holds its name) fails the job, saying why.
    from pytest_niah.errors import OutputError

    (tmp_path / "taken").write_text("a file", encoding="utf-8")
    path = tmp_path / "taken" / "part-001-of-001.npz"
    with pytest.raises(OutputError) as caught:
        write_part(path, {"part_schema": 2}, ["a"], np.eye(1))
    assert caught.value.problem == (f"--niah-shard-dir: cannot write the part {path} (File exists)")


def test_a_file_that_is_no_part_is_refused_with_the_readers_own_reason(tmp_path: Path):
    # Found (mutation, shard_parts.py:163 the cause's `or` -> `and`, its text dropped): the
    # refusal quotes what the reader found, not only the exception's type.
    path = tmp_path / "part-001-of-001.npz"
    path.write_bytes(b"PK\x03\x04")  # a zip's first bytes, then nothing
    with pytest.raises(ShardError) as caught:
        read_part(path)
    assert (
        caught.value.problem
        == f"{path} is not a readable pytest-niah part (File is not a zip file)"
    )


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_shard_is_a_usage_error_saying_no_value(value):
    # Found (mutation, shard_parts.py:49 the empty-value check deleted): --niah-shard=
    # with nothing after it is named as such, not a TypeError.
    with pytest.raises(ConfigError, match="--niah-shard: no value"):
        Shard.parse(value)


@pytest.mark.parametrize(
    "manifest",
    [
        {"shard": [1, 1], "config": {}},  # no layout
        {"shard": "1/1", "config": {}, "layout": {"plan": {"tokens": {}}}},  # not a pair
        {"shard": [1, 1], "config": {}, "layout": {"plan": {"tokens": {}}}},  # no batches
        {"shard": [1, 1], "config": {}, "layout": {"plan": {"tokens": {}}}, "batches": [["0"]]},
        # A batch that is no list, though nothing in it is a non-integer (mutation sweep,
        # shard_parts.py:188, the list check dropped).
        {"shard": [1, 1], "config": {}, "layout": {"plan": {"tokens": {}}}, "batches": [{}]},
        {"shard": [1, 1], "config": {}, "layout": {"plan": {"tokens": {}}}, "batches": [""]},
    ],
)
def test_a_manifest_missing_what_a_part_needs_is_named_damaged(tmp_path: Path, manifest):
    # Found (mutation, shard_parts.py:181 the raise deleted): a part whose manifest lacks
    # its shard, config or layout is refused by name, not an UnboundLocalError later.
    path = tmp_path / "part-001-of-001.npz"
    write_part(path, {**manifest, "part_schema": PART_SCHEMA}, ["a"], np.eye(1))
    with pytest.raises(ShardError, match="has a damaged manifest"):
        read_part(path)


def test_a_part_with_vectors_but_no_keys_is_refused_and_an_empty_part_is_read(tmp_path: Path):
    # Found (mutation sweep, shard_parts.py:182 and :193): the count check let a part with no
    # keys through whatever vectors it held; rows under no key are as damaged as rows short
    # of their keys. A shard with nothing to embed still writes and reads an empty part.
    manifest = part_manifest(2, 2)
    path = tmp_path / "part-002-of-002.npz"
    write_part(path, manifest, [], np.full((2, 2), np.nan))
    with pytest.raises(ShardError, match=r"part-002-of-002\.npz holds 0 keys but 2 vectors"):
        read_part(path)
    write_part(path, manifest, [], [])
    part = read_part(path)
    assert part.keys == [] and part.vectors.size == 0


class CountingProgress:
    """Each phase's announced total beside the units it advanced through."""

    def __init__(self) -> None:
        self.phases: dict[str, list[int]] = {}
        self.current = ""

    def start(self, phase: str, total: int | None, unit: str, *, weights=()) -> None:
        self.current = phase
        self.phases[phase] = [total or 0, 0]

    def advance(self, done: int, tokens: int = 0) -> None:
        self.phases[self.current][1] += done

    def finish(self, note: str = "") -> None:
        pass


def test_a_shard_jobs_planning_announces_as_many_blocks_as_it_builds(
    tiny_static_model: Path, shared_corpus_dir: Path, tmp_path: Path
):
    # Found (mutation seed 1415723878, shards.py:105 `*` -> `/`): the phase's total is
    # lengths x draws x groups, each block advanced once: the bar ends at 100%.
    from pytest_niah.experiment.shards import run_shard

    config = NiahConfig(
        model=str(tiny_static_model),
        corpus=str(shared_corpus_dir),
        lengths=(128, 256),
        positions=2,
        groups=("dietary-01", "location-02", "vehicle-01"),
        arms=("literal",),
        seeds=(1, 2),  # two draws: `lengths / draws` would still make the total
        device="cpu",
    )
    progress = CountingProgress()
    run_shard(config, Shard(1, 2), tmp_path, use_cache=False, progress=progress)
    total, done = progress.phases["building haystacks"]
    assert total == done and done >= 2 * 2 * 3


def test_a_local_part_before_a_served_one_is_named_not_a_traceback(tmp_path: Path):
    # Found (mutation seed 1954973815, shards.py:277 `ours is not None` dropped): the first
    # part measured no server, the second did: the mutant called None.matches.
    fingerprint = ServerFingerprint(None, 64, "no limit within 64 tokens", 1e-3, ROWS)
    _written(tmp_path, 1, None, "local-model")
    _written(tmp_path, 2, fingerprint, "served-model")
    with pytest.raises(ShardError, match=r"comes from another run .*\(model identity"):
        results_from_shards(NiahConfig(model="packaged-static"), tmp_path)
