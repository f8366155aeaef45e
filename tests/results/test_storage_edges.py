"""Edges of the run store (pytest_niah.results.storage, run_file) that mutation testing found open.

The save default, the file a refusal names, an old plain file a concurrent save already
removed, where an unsaved run will go, a reference that is a path (never looked up inside
the store), how many saved runs a refusal lists, and the longest run name.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from niah_synthetic import results

from pytest_niah.errors import CompareError, ConfigError, OutputError, ResultsError
from pytest_niah.naming import label_file_name
from pytest_niah.results import storage
from pytest_niah.results.provenance import machine_id
from pytest_niah.results.run_file import RunHeader, check_name, run_header, run_name_of
from pytest_niah.results.storage import RunStore, Unreadable

LABEL = "model-a"
NO_COMMIT: dict[str, str | bool] = {}
SAVED_AT = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def run():
    return results()


def test_a_store_save_refuses_an_existing_name_by_default(run, tmp_path):
    store = RunStore(tmp_path)
    first = store.save(run, "b", label=LABEL, commit=NO_COMMIT)
    with pytest.raises(OutputError, match="exists already") as caught:
        store.save(run, "b", label=LABEL, commit=NO_COMMIT)
    assert f"({first})" in str(caught.value)


def old_plain_run(store: RunStore, run, name: str) -> Path:
    """A run as an earlier version saved it: plain ``<name>.json`` in this machine's folder."""
    saved = store.save(run, f"{name}-tmp", label=LABEL, commit=NO_COMMIT)
    plain = saved.parent / f"{name}.json"
    plain.write_bytes(gzip.decompress(saved.read_bytes()))
    saved.unlink()
    return plain


def test_a_refused_save_names_the_file_that_holds_the_run(run, tmp_path):
    store = RunStore(tmp_path)
    plain = old_plain_run(store, run, "old")
    with pytest.raises(OutputError) as caught:
        store.save(run, "old", label=LABEL, commit=NO_COMMIT)
    # The plain file of the earlier version, not the .json.gz this version would write.
    assert f"({plain})" in str(caught.value)


def test_a_save_that_loses_a_race_names_the_file_it_would_have_written(run, tmp_path, monkeypatch):
    # Another save created the file between the check and the write.
    monkeypatch.setattr(storage, "create_whole", lambda target, data: False)
    store = RunStore(tmp_path)
    with pytest.raises(OutputError) as caught:
        store.save(run, "raced", label=LABEL, commit=NO_COMMIT)
    assert f"({store.path('raced', LABEL)})" in str(caught.value)


def test_an_overwrite_replaces_an_old_plain_file_and_creates_a_new_one(run, tmp_path):
    store = RunStore(tmp_path)
    fresh = store.save(run, "fresh", label=LABEL, commit=NO_COMMIT, overwrite=True)
    assert fresh.name == "fresh.json.gz" and fresh.is_file()
    plain = old_plain_run(store, run, "old")
    target = store.save(run, "old", label=LABEL, commit=NO_COMMIT, overwrite=True)
    # One file per run: the .json.gz replaces the plain file an earlier version wrote.
    assert target.name == "old.json.gz" and not plain.exists()
    assert store.saved("old", LABEL) == target


def test_an_overwrite_tolerates_the_old_plain_file_already_gone(run, tmp_path, monkeypatch):
    store = RunStore(tmp_path)
    plain = old_plain_run(store, run, "shared")
    real = storage.write_atomic

    def concurrent(target, data):
        written = real(target, data)
        plain.unlink()  # a concurrent overwrite removed the old plain file first
        return written

    monkeypatch.setattr(storage, "write_atomic", concurrent)
    target = store.save(run, "shared", label=LABEL, commit=NO_COMMIT, overwrite=True)
    assert target.name == "shared.json.gz" and target.is_file() and not plain.exists()


def test_run_path_is_the_saved_file_else_where_the_run_will_be_saved(run, tmp_path):
    store = RunStore(tmp_path)
    expected = tmp_path / label_file_name(LABEL) / machine_id() / "new.json.gz"
    assert RunStore(tmp_path).target("new", LABEL) == expected
    plain = old_plain_run(store, run, "old")
    assert RunStore(tmp_path).target("old", LABEL) == plain


def test_a_reference_with_a_path_separator_is_never_looked_up_inside_the_store(
    run, tmp_path, monkeypatch
):
    store = RunStore(tmp_path / "store")
    saved = store.save(run, "escape", label=LABEL, commit=NO_COMMIT)
    # ../escape from this machine's folder would reach a run file outside that folder.
    outside = saved.parent.parent / "escape.json.gz"
    outside.write_bytes(saved.read_bytes())
    monkeypatch.chdir(tmp_path)  # and it is no file relative to the working directory
    with pytest.raises(CompareError, match="neither a results file nor a run saved"):
        RunStore(store.root).resolve("../escape", LABEL)


@pytest.mark.parametrize(("saved", "more"), [(20, ""), (21, " and 1 more"), (23, " and 3 more")])
def test_a_refusal_lists_at_most_twenty_saved_runs_and_counts_the_rest(tmp_path, saved, more):
    folder = tmp_path / label_file_name(LABEL) / machine_id()
    folder.mkdir(parents=True)
    for i in range(saved):
        (folder / f"r{i:02d}.json.gz").write_bytes(b"")  # listed by name, never read
    with pytest.raises(CompareError) as caught:
        RunStore(tmp_path).resolve("missing", LABEL)
    message = str(caught.value)
    key = f"{label_file_name(LABEL)}/{machine_id()}"
    listed = message.split("(model/machine/name): ", 1)[1]
    expected = ", ".join(f"{key}/r{i:02d}" for i in range(20))
    assert listed == expected + more


def test_run_names_are_limited_to_200_bytes():
    check_name("a" * 200)
    check_name("é" * 100)  # 200 bytes of UTF-8
    for name in ("a" * 201, "é" * 100 + "a"):
        with pytest.raises(ConfigError, match=r"is 201 bytes long.*at most 200"):
            check_name(name)


def test_a_too_long_name_is_quoted_and_shortened_to_40_characters():
    # A long name would flood the message: it shows (and suggests) the first 40 characters.
    first = "a" * 40
    with pytest.raises(ConfigError) as caught:
        check_name(first + "b" + "c" * 160)
    assert str(caught.value) == (
        f"--niah-save: run name {first!r}... is 201 bytes long, too long for a file name "
        f"(at most 200). Fix: give a shorter name, e.g. {first!r}"
    )


def test_a_store_and_an_unreadable_entry_are_immutable_values(tmp_path):
    bad = Unreadable(tmp_path / "x.json.gz", "not gzip")
    with pytest.raises(dataclasses.FrozenInstanceError):
        bad.reason = "fine"  # type: ignore[misc]
    assert len({bad, Unreadable(tmp_path / "x.json.gz", "not gzip")}) == 1
    store = RunStore(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        store.root = tmp_path / "elsewhere"  # type: ignore[misc]
    assert len({store, RunStore(tmp_path)}) == 1


def test_a_file_named_only_a_suffix_is_no_run():
    assert run_name_of(Path("runs/.json.gz")) is None
    assert run_name_of(Path("runs/.json")) is None
    assert run_name_of(Path("runs/a.json.gz")) == "a" and run_name_of(Path("runs/a.json")) == "a"


def test_a_run_header_is_an_immutable_value(tmp_path):
    header = RunHeader(tmp_path / "a.json.gz", "a", LABEL, SAVED_AT, "Linux-x86_64-cp311")
    with pytest.raises(dataclasses.FrozenInstanceError):
        header.name = "b"  # type: ignore[misc]
    assert len({header, dataclasses.replace(header)}) == 1


@pytest.mark.parametrize("missing", ["run_schema_version", "name", "label", "saved_at"])
def test_a_header_lacking_any_one_field_is_not_a_saved_run(tmp_path, missing):
    fields = {
        "run_schema_version": 2,
        "name": "a",
        "label": LABEL,
        "saved_at": "2024-01-02T03:04:05+00:00",
    }
    path = tmp_path / "a.json"
    path.write_text(json.dumps({k: v for k, v in fields.items() if k != missing}))
    with pytest.raises(ResultsError, match="not a saved run"):
        run_header(path)
    fields["name"] = 3  # present, but not text
    path.write_text(json.dumps(fields))
    with pytest.raises(ResultsError, match="not a saved run"):
        run_header(path)


def test_a_saved_run_does_not_depend_on_the_order_of_the_commit_fields(run, tmp_path):
    commit = {"id": "ab" * 20, "branch": "trunk", "dirty": False}
    one = RunStore(tmp_path / "one").save(run, "a", label=LABEL, now=SAVED_AT, commit=commit)
    reordered = dict(reversed(commit.items()))
    two = RunStore(tmp_path / "two").save(run, "a", label=LABEL, now=SAVED_AT, commit=reordered)
    # The same run gives the same bytes (git sees no change): keys are written sorted.
    assert one.read_bytes() == two.read_bytes()


def test_hidden_folders_and_stray_files_in_the_store_hold_no_runs(run, tmp_path):
    store = RunStore(tmp_path)
    saved = store.save(run, "a", label=LABEL, commit=NO_COMMIT)
    hidden = tmp_path / ".trash" / machine_id()
    hidden.mkdir(parents=True)
    (hidden / "old.json.gz").write_bytes(saved.read_bytes())
    (tmp_path / "notes.json.gz").write_bytes(b"")  # a file, not a model folder
    assert store.files() == [saved]


def test_a_machine_folder_that_cannot_be_listed_holds_no_runs(tmp_path: Path) -> None:
    from pytest_niah.results.store_layout import _run_files_in

    not_a_folder = tmp_path / "machine"
    not_a_folder.write_text("")
    assert _run_files_in(not_a_folder) == []
    assert _run_files_in(tmp_path / "gone") == []
