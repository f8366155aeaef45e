"""Edges of the model identity (pytest_niah.embed.identity) that mutation testing found open.

Which JSON strings can name a hidden file, a hub snapshot with a missing blob, the hub
lookup staying offline, the settle rule reading the inode change time, and the identity
being an immutable value.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import pytest
from embed_fakes import link_into_blobs

from pytest_niah.embed import file_hashes, model_files
from pytest_niah.embed.identity import (
    cached_hub_folder,
    folder_source,
    hub_source,
    model_identity,
)
from pytest_niah.embed.model_files import file_digests

REVISION = "0123456789abcdef0123456789abcdef01234567"
AN_HOUR_AGO = time.time_ns() - 3600 * 10**9


def model_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(os.urandom(64))
    (folder / ".extra").write_text("a hidden file", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("file", "content"),
    [
        # A vocabulary's strings are tokens, never file names.
        ("tokenizer.json", {"model": {"merges": [".extra", "a b"]}}),
        # A hidden JSON file is no config the loader reads.
        (".settings.json", {"path": ".extra"}),
        # A multi-line text (a chat template, say) is no file name.
        ("config.json", {"template": ".extra\n"}),
        # Nor a string of 256 characters or more.
        ("config.json", {"path": ".extra" + " " * 250}),
        # The folder itself is no hidden path: its hidden files stay out.
        ("config.json", {"path": ".", "root": "./"}),
    ],
    ids=["vocabulary", "hidden-config", "multi-line", "long", "the-folder"],
)
def test_strings_that_name_no_hidden_path_do_not_add_a_hidden_file(tmp_path, file, content):
    folder = model_folder(tmp_path / "model")
    (folder / file).write_text(json.dumps(content), encoding="utf-8")
    assert ".extra" not in file_digests(folder)


@pytest.mark.parametrize("path", ["./.extra", ".extra" + " " * 249], ids=["short", "255-chars"])
def test_a_config_string_naming_a_hidden_file_adds_it(tmp_path, path):
    folder = model_folder(tmp_path / "model")
    (folder / "config.json").write_text(json.dumps({"path": path}), encoding="utf-8")
    assert ".extra" in file_digests(folder)


@pytest.mark.parametrize(("extra", "read"), [(0, True), (1, False)])
def test_json_files_up_to_the_size_limit_are_read_for_hidden_names(tmp_path, extra, read):
    folder = model_folder(tmp_path / "model")
    text = json.dumps({"path": ".extra", "pad": ""})
    padded = text[:-2] + " " * (model_files.MAX_CONFIG_BYTES + extra - len(text)) + '"}'
    (folder / "config.json").write_text(padded, encoding="utf-8")
    assert (folder / "config.json").stat().st_size == model_files.MAX_CONFIG_BYTES + extra
    assert (".extra" in file_digests(folder)) is read


def test_a_hidden_link_out_of_the_folder_is_not_part_of_the_model(tmp_path):
    folder = model_folder(tmp_path / "model")
    outside = tmp_path / "elsewhere.bin"
    outside.write_bytes(b"not the model's")
    (folder / ".outside").symlink_to(outside)
    (folder / "config.json").write_text('{"path": ".outside"}', encoding="utf-8")
    assert ".outside" not in file_digests(folder)


def test_a_memo_folder_that_does_not_exist_yet_is_created(tmp_path):
    folder = model_folder(tmp_path / "model")
    memo = tmp_path / "cache" / "nested" / "memo"
    file_digests(folder, memo)
    assert (memo / file_hashes.MEMO_FILE).is_file()


def test_a_hub_snapshot_with_a_missing_blob_is_not_known_by_its_revision(tmp_path):
    snapshot = model_folder(tmp_path / "models--org--name" / "snapshots" / REVISION)
    link_into_blobs(snapshot)
    assert hub_source(snapshot) == {"kind": "hub", "repo": "org/name", "revision": REVISION}
    # The weights' blob is gone (an interrupted download, a pruned cache): the revision no
    # longer names what the folder holds.
    (snapshot / "model.safetensors").resolve().unlink()
    assert hub_source(snapshot) is None
    assert folder_source(snapshot)["kind"] == "files"


def test_the_hub_cache_lookup_never_downloads(monkeypatch, tmp_path):
    import huggingface_hub

    calls = []

    def snapshot_download(name, **kwargs):
        calls.append(kwargs)
        if not kwargs.get("local_files_only"):
            raise AssertionError("would download")
        return str(tmp_path)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    assert cached_hub_folder("some-org/some-model") == tmp_path
    assert calls == [{"local_files_only": True}]


def test_a_file_with_an_old_mtime_but_a_new_inode_change_time_is_not_memoised(
    tmp_path, monkeypatch
):
    folder = model_folder(tmp_path / "model")
    for path in folder.iterdir():
        os.utime(path, ns=(AN_HOUR_AGO, AN_HOUR_AGO))  # the change time is still now
    read: list[str] = []
    real = file_hashes._sha256
    monkeypatch.setattr(file_hashes, "_sha256", lambda p: read.append(p) or real(p))
    memo = tmp_path / "memo"
    file_digests(folder, memo)
    file_digests(folder, memo)
    # Each file read both times: set back, the mtime says nothing about a change just now.
    assert sorted(Path(p).name for p in read) == 2 * ["config.json"] + 2 * ["model.safetensors"]


def test_an_identity_is_an_immutable_value():
    identity = model_identity({"kind": "test"}, {"dtype": "float32"}, versions=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        identity.digest = "0" * 64  # type: ignore[misc]


def test_an_empty_folder_at_a_hub_snapshot_path_is_not_known_by_its_revision(tmp_path):
    """Nothing links into the blobs, so nothing says the commit names the content."""
    from pytest_niah.embed.identity import hub_source, is_hub_written

    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--some-org--empty-model"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    assert is_hub_written(snapshot, revision) is False
    assert hub_source(snapshot) is None
