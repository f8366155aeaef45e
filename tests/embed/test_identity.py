"""The identity of an embedding: model content (not its path), settings, library versions.

Every cache and comparison keys on it, so each part that changes the bits must change it,
and nothing else may (the folder a model sits in, a re-run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
from embed_fakes import link_into_blobs

from pytest_niah.embed import file_hashes
from pytest_niah.embed import identity as identity_module
from pytest_niah.embed.file_hashes import MEMO_FILE
from pytest_niah.embed.identity import (
    EMBEDDING_SCHEMA,
    ModelIdentity,
    folder_source,
    hub_source,
    library_versions,
    model_identity,
)
from pytest_niah.embed.model_files import file_digests
from pytest_niah.embed.st_backend import SentenceTransformerEmbedder

MIB = 1 << 20
REVISION = "0123456789abcdef0123456789abcdef01234567"
AN_HOUR_AGO = time.time_ns() - 3600 * 10**9


def model_folder(folder: Path, weights: int = 64) -> Path:
    """A folder shaped like a local model: config, tokenizer, weights of ``weights`` bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    (folder / "modules.json").write_text("[]", encoding="utf-8")
    (folder / "tokenizer.json").write_text('{"model": {}}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(os.urandom(weights))
    (folder / ".hidden").write_text("not part of the model", encoding="utf-8")
    return folder


def settle(folder: Path, when: int = AN_HOUR_AGO) -> None:
    """Give every file an old mtime (files changed just now are never memoised)."""
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(when, when))


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memoise files changed just now: os.utime sets the mtime back, but the inode change
    time it moves cannot be, and a file is memoised only once both have settled."""
    monkeypatch.setattr(file_hashes, "_SETTLED_NS", -(10**18))


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the streaming hash reads, in order."""
    calls: list[str] = []
    real = file_hashes._sha256

    def spy(path: str) -> str:
        calls.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(file_hashes, "_sha256", spy)
    return calls


def embedder(name: str, **kwargs) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(name, device="cpu", **kwargs)


# -- (a) model keyword arguments ---------------------------------------------------------


def test_a_torch_dtype_in_model_kwargs_changes_the_identity():
    plain = embedder("packaged-minilm").identity
    bf16 = embedder("packaged-minilm", model_kwargs={"torch_dtype": "bfloat16"}).identity
    assert bf16.digest != plain.digest
    assert bf16.differences(plain) == ["settings.model_kwargs.torch_dtype"]


def test_settings_that_change_embeddings_change_the_identity():
    base = embedder("packaged-minilm").identity
    assert embedder("packaged-minilm").identity == base  # stable across instances
    changed = {
        "doc_prompt": embedder("packaged-minilm", doc_prompt="passage: "),
        "query_prompt": embedder("packaged-minilm", query_prompt="query: "),
        "max_seq_length": embedder("packaged-minilm", max_seq_length=32),
        "encode_kwargs.truncate_dim": embedder(
            "packaged-minilm", encode_kwargs={"truncate_dim": 64}
        ),
        "dtype": embedder("packaged-minilm", dtype="bfloat16"),
    }
    for part, other in changed.items():
        assert other.identity.differences(base) == [f"settings.{part}"], part
    settings = base.parts["settings"]
    assert (settings["device_type"], settings["dtype"]) == ("cpu", "float32")
    assert base.parts["schema"] == EMBEDDING_SCHEMA
    # trust_remote_code given through model_kwargs is the option's business, not an identity
    assert embedder("packaged-minilm", model_kwargs={"trust_remote_code": False}).identity == base


# -- (b) every byte of every file ----------------------------------------------------------


def test_an_edit_in_the_middle_of_a_large_weights_file_changes_the_identity(tmp_path: Path):
    folder = model_folder(tmp_path / "model", weights=17 * MIB)
    before = embedder(str(folder)).identity
    weights = folder / "model.safetensors"
    with weights.open("r+b") as handle:  # same size; first and last MiB untouched
        handle.seek(17 * MIB // 2)
        byte = handle.read(1)
        handle.seek(17 * MIB // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    after = embedder(str(folder)).identity
    assert after.digest != before.digest
    assert after.differences(before) == ["source.files.model.safetensors"]


def test_every_file_counts_but_hidden_ones(tmp_path: Path):
    folder = model_folder(tmp_path / "model")
    before = folder_source(folder)
    assert before["kind"] == "files"
    assert sorted(before["files"]) == [
        "config.json",
        "model.safetensors",
        "modules.json",
        "tokenizer.json",
    ]
    (folder / ".hidden").write_text("changed", encoding="utf-8")
    assert folder_source(folder) == before
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text("{}", encoding="utf-8")
    assert "1_Pooling/config.json" in folder_source(folder)["files"]


# -- (c) library versions -------------------------------------------------------------------


def test_library_versions_are_part_of_the_identity(monkeypatch: pytest.MonkeyPatch):
    parts = embedder("packaged-minilm").identity.parts
    for library in ("torch", "transformers", "sentence-transformers", "tokenizers"):
        assert parts["versions"][library] == metadata.version(library), library
    assert library_versions() == parts["versions"]
    before = model_identity({"kind": "x"}, {})
    real = metadata.version

    def other_torch(name: str) -> str:
        return "0.0.1" if name == "torch" else real(name)

    monkeypatch.setattr(identity_module.metadata, "version", other_torch)
    after = model_identity({"kind": "x"}, {})
    assert after.differences(before) == ["versions.torch"]
    assert model_identity({"kind": "x"}, {}, versions=False).parts.keys() == {
        "schema",
        "source",
        "settings",
    }


# -- (d) content, not the path ------------------------------------------------------------


def test_the_same_files_elsewhere_give_the_same_identity(tmp_path: Path):
    folder = model_folder(tmp_path / "here")
    copy = Path(shutil.copytree(folder, tmp_path / "elsewhere" / "renamed"))
    first, second = embedder(str(folder)).identity, embedder(str(copy)).identity
    assert first == second
    assert str(tmp_path) not in json.dumps(dict(first.parts))
    (copy / "config.json").write_text('{"model_type": "roberta"}', encoding="utf-8")
    assert embedder(str(copy)).identity != first


# -- (e) the memo ---------------------------------------------------------------------------


def test_the_memo_saves_re_reading_until_a_file_changes(
    tmp_path: Path, hashes: list[str], settled_at_once: None
):
    folder = model_folder(tmp_path / "model", weights=3 * MIB)
    settle(folder)
    memo = tmp_path / "cache"
    first = file_digests(folder, memo)
    assert sorted(hashes) == sorted(first) and (memo / MEMO_FILE).is_file()
    hashes.clear()
    assert file_digests(folder, memo) == first
    assert embedder(str(folder), memo_dir=memo).identity.parts["source"]["files"] == first
    assert hashes == []  # nothing read again, from this "process" or a new embedder
    # A touched file (new mtime, same content) is read again; the others are not.
    os.utime(folder / "model.safetensors", ns=(AN_HOUR_AGO + 10**9, AN_HOUR_AGO + 10**9))
    assert file_digests(folder, memo) == first
    assert hashes == ["model.safetensors"]
    hashes.clear()
    # Without a memo every file is read every time.
    file_digests(folder)
    assert len(hashes) == 4


def test_a_file_changed_just_now_is_not_memoised(tmp_path: Path, hashes: list[str]):
    """Its mtime may not move when it changes again at once: same size, same stamp."""
    folder = model_folder(tmp_path / "model")
    memo = tmp_path / "cache"
    file_digests(folder, memo)
    file_digests(folder, memo)
    assert len(hashes) == 8
    weights = folder / "model.safetensors"
    stat = weights.stat()
    weights.write_bytes(os.urandom(stat.st_size))
    os.utime(weights, ns=(stat.st_mtime_ns, stat.st_mtime_ns))  # the same tick
    assert file_digests(folder, memo)["model.safetensors"] == file_hashes._sha256(str(weights))


def test_an_unusable_memo_folder_only_costs_time(tmp_path: Path, hashes: list[str]):
    folder = model_folder(tmp_path / "model")
    (tmp_path / "afile").write_text("in the way", encoding="utf-8")
    assert file_digests(folder, tmp_path / "afile" / "memo") == file_digests(folder)
    (tmp_path / "memo").mkdir()
    (tmp_path / "memo" / MEMO_FILE).write_bytes(os.urandom(4096))  # not a database
    assert file_digests(folder, tmp_path / "memo") == file_digests(folder)


# -- (f) hub snapshots --------------------------------------------------------------------


def test_a_hub_cache_snapshot_is_known_by_its_revision(tmp_path: Path, hashes: list[str]):
    snapshot = model_folder(
        tmp_path / "hub" / "models--some-org--some-model" / "snapshots" / REVISION
    )
    link_into_blobs(snapshot)
    source = embedder(str(snapshot)).identity.parts["source"]
    assert source == {"kind": "hub", "repo": "some-org/some-model", "revision": REVISION}
    assert hashes == []  # the commit names the content: nothing is read
    assert hub_source(tmp_path / "hub" / "models--org--name" / "snapshots" / "main") is None
    assert hub_source(tmp_path / "models--org--name" / "snapshots" / f"{REVISION}0") is None
    assert hub_source(tmp_path) is None


def test_models_in_subfolders_of_one_snapshot_are_told_apart(tmp_path: Path):
    snapshot = tmp_path / "models--org--several" / "snapshots" / REVISION
    model_folder(snapshot / "first")
    model_folder(snapshot / "second" / "model")
    link_into_blobs(snapshot)
    first = embedder(str(snapshot / "first")).identity
    second = embedder(str(snapshot / "second" / "model")).identity
    assert first.parts["source"]["subfolder"] == "first"
    assert second.parts["source"]["subfolder"] == "second/model"
    assert first.digest != second.digest
    assert "subfolder" not in hub_source(snapshot)


def test_a_hub_name_in_the_hub_cache_needs_no_load(tmp_path: Path, monkeypatch):
    from huggingface_hub import constants

    repo = tmp_path / "models--some-org--some-model"
    link_into_blobs(model_folder(repo / "snapshots" / REVISION))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    hub = embedder("some-org/some-model")
    assert hub.identity.parts["source"] == {
        "kind": "hub",
        "repo": "some-org/some-model",
        "revision": REVISION,
    }
    assert "model" not in hub.__dict__  # not loaded


# -- the identity object --------------------------------------------------------------------


def test_identity_is_canonical_json_and_reports_differences():
    one = ModelIdentity.of({"b": {"y": 1, "x": [1, 2]}, "a": "s"})
    two = ModelIdentity.of({"a": "s", "b": {"x": [1, 2], "y": 1}})
    assert one == two and len(one.digest) == 64 and one.short == one.digest[:12]
    other = ModelIdentity.of({"a": "t", "b": {"x": [1, 2]}, "c": 1})
    assert one.differences(other) == ["a", "b.y", "c"]
    assert one.differences(ModelIdentity.of({"a": "s", "b": 3})) == ["b"]


@pytest.mark.integration
def test_identity_of_a_packaged_model_does_not_import_torch():
    code = (
        "import sys\n"
        "from pytest_niah.embed.st_backend import SentenceTransformerEmbedder\n"
        "identity = SentenceTransformerEmbedder('packaged-minilm').identity\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print(identity.digest)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == embedder("packaged-minilm").identity.digest


def test_a_hub_name_loads_the_revision_its_identity_names(tmp_path: Path, monkeypatch):
    """The hub moving on between keying and loading must not put new vectors under old keys."""
    from huggingface_hub import constants

    from pytest_niah.embed.models import packaged_folder

    repo = tmp_path / "models--some-org--minilm"
    keyed = repo / "snapshots" / REVISION
    newer = repo / "snapshots" / REVISION.replace("0", "f")
    for snapshot, window in ((keyed, 200), (newer, 100)):
        shutil.copytree(packaged_folder("packaged-minilm"), snapshot)
        config = snapshot / "sentence_bert_config.json"
        settings = json.loads(config.read_text(encoding="utf-8"))
        config.write_text(json.dumps(settings | {"max_seq_length": window}), encoding="utf-8")
        link_into_blobs(snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub = embedder("some-org/minilm")
    assert hub.identity.parts["source"]["revision"] == REVISION
    (repo / "refs" / "main").write_text(newer.name, encoding="utf-8")  # the hub moved on
    assert hub.model.max_seq_length == 200


# -- identity follows what the model loads, not what its path looks like (issue 23) ----------------


def test_a_folder_at_a_snapshot_shaped_path_is_known_by_its_files(tmp_path: Path):
    """Two different models at the same kind of path do not share an identity."""
    shaped = Path("models--some-org--some-model") / "snapshots" / REVISION
    one = embedder(str(model_folder(tmp_path / "a" / shaped))).identity
    other = embedder(str(model_folder(tmp_path / "b" / shaped))).identity
    assert one.parts["source"]["kind"] == "files"
    assert one.digest != other.digest
    assert other.differences(one) == ["source.files.model.safetensors"]


def test_a_snapshot_with_a_link_replaced_by_a_file_is_known_by_its_files(tmp_path: Path):
    snapshot = model_folder(tmp_path / "models--org--name" / "snapshots" / REVISION)
    link_into_blobs(snapshot)
    assert folder_source(snapshot)["kind"] == "hub"
    weights = snapshot / "model.safetensors"
    weights.unlink()
    weights.write_bytes(os.urandom(64))  # an editor's save replaces the link
    source = folder_source(snapshot)
    assert source["kind"] == "files"
    assert source["files"]["model.safetensors"] == file_hashes._sha256(str(weights))


def test_a_hidden_folder_the_models_config_names_is_part_of_its_identity(tmp_path: Path):
    folder = model_folder(tmp_path / "model")
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": ".pool", "type": "sentence_transformers.models.Pooling"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (folder / ".pool").mkdir()
    pooling = folder / ".pool" / "config.json"
    pooling.write_text('{"pooling_mode_mean_tokens": true}', encoding="utf-8")
    before = folder_source(folder)
    assert ".pool/config.json" in before["files"]
    assert ".hidden" not in before["files"]  # named by no config: still not the model
    pooling.write_text('{"pooling_mode_cls_token": true}', encoding="utf-8")
    assert (
        folder_source(folder)["files"][".pool/config.json"] != before["files"][".pool/config.json"]
    )


def test_an_edit_that_keeps_size_and_mtime_is_read_again(
    tmp_path: Path, hashes: list[str], settled_at_once: None
):
    folder = model_folder(tmp_path / "model", weights=4096)
    settle(folder)
    memo = tmp_path / "cache"
    first = file_digests(folder, memo)
    hashes.clear()
    assert file_digests(folder, memo) == first and hashes == []  # memoised
    weights = folder / "model.safetensors"
    stat = weights.stat()
    weights.write_bytes(os.urandom(stat.st_size))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # size and mtime as before
    assert (weights.stat().st_size, weights.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    after = file_digests(folder, memo)
    assert hashes == ["model.safetensors"]
    assert after["model.safetensors"] == file_hashes._sha256(str(weights))
    assert after["model.safetensors"] != first["model.safetensors"]
