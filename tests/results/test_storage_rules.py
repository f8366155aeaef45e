"""Rules of results/storage.py that mutants found unchecked, beside test_storage*.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah.errors import CompareError, ConfigError
from pytest_niah.results.storage import RunStore


@pytest.mark.parametrize("name", ["", "../outside", "a/b", "x" * 300])
def test_where_a_run_would_be_saved_is_asked_only_of_a_usable_name(tmp_path: Path, name):
    # Found (mutation, storage.py:76 check_name deleted from path()): every door of the
    # store checks the run name, so no name leads out of its folder.
    store = RunStore(tmp_path)
    for ask in (store.path, store.saved, store.target):
        with pytest.raises(ConfigError):
            ask(name, "model")
    assert store.path("base", "model").parent == store.folder("model")


def test_a_machine_folder_that_cannot_be_listed_is_passed_over(tmp_path: Path, monkeypatch):
    # Found (mutation, storage.py:333 `return []` -> `return None`): a machine folder the
    # process may not list (no permission, or removed since the model folder was listed) is
    # passed over, and the runs of the others are still found. Root may list any folder, so
    # the refusal is the operating system's answer made here.
    readable, locked = tmp_path / "model" / "machine-a", tmp_path / "model" / "machine-b"
    for folder in (readable, locked):
        folder.mkdir(parents=True)
        (folder / "base.json").write_text("{}", encoding="utf-8")
    real_iterdir = Path.iterdir

    def iterdir(self: Path):
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert RunStore(tmp_path).files() == [readable / "base.json"]


def test_the_runs_of_the_labels_asked_for_and_only_those(tmp_path: Path):
    # Found (mutation, storage.py:172 the label filter deleted): files(labels=...) lists
    # the saved runs of those labels, not every label's.
    store = RunStore(tmp_path)
    for label in ("model-a", "model-b"):
        folder = store.folder(label)
        folder.mkdir(parents=True)
        (folder / "base.json").write_text("{}", encoding="utf-8")
    assert store.files(["model-a"]) == [store.folder("model-a") / "base.json"]
    assert len(store.files()) == 2


def test_an_empty_compare_reference_names_no_run_even_beside_a_bare_suffix_file(tmp_path: Path):
    # Found (mutation, storage.py:248 `bool(ref)` dropped): "" is no run name, so it never
    # picks the file named only ".json.gz" that would be "<name>.json.gz" for an empty name.
    store = RunStore(tmp_path)
    folder = store.folder("model")
    folder.mkdir(parents=True)
    (folder / ".json.gz").write_bytes(b"")
    with pytest.raises(CompareError, match="neither a results file nor a run saved"):
        store.resolve("", "model")


def test_a_run_saved_under_the_name_previous_is_the_one_previous_means(tmp_path: Path):
    # Found (mutation, storage.py:250 `here is None` dropped): a run the user named
    # "previous" on this kind of machine is what --niah-compare=previous names, before
    # the newest run.
    store = RunStore(tmp_path)
    folder = store.folder("model")
    folder.mkdir(parents=True)
    (folder / "previous.json.gz").write_bytes(b"")
    assert store.resolve("previous", "model") == folder / "previous.json.gz"


def test_the_folder_of_another_kind_of_machine_is_that_machines(tmp_path: Path):
    # Found (mutation, storage.py:68 the machine asked for ignored): runs saved on another
    # kind of machine are found in that machine's folder, not this one's.
    store = RunStore(tmp_path)
    other = store.folder("model", "Other-arm64-cp399")
    assert other == tmp_path / "model" / "Other-arm64-cp399"
    other.mkdir(parents=True)
    (other / "base.json.gz").write_bytes(b"")
    assert store.saved("base", "model", "Other-arm64-cp399") == other / "base.json.gz"
    assert store.saved("base", "model") is None


def test_only_visible_run_files_of_a_machine_folder_are_runs(tmp_path: Path):
    # Found (mutation, storage.py:337 each clause of the filter dropped): a machine folder
    # may hold notes, hidden copies and killed writes' temporary files beside its runs.
    store = RunStore(tmp_path)
    folder = store.folder("model")
    folder.mkdir(parents=True)
    for name in (
        "base.json.gz",
        "old.json",
        "notes.txt",
        ".copy.json.gz",
        ".base.json.gz.niah-tmp-1-ab",
    ):
        (folder / name).write_bytes(b"")
    assert [p.name for p in store.files()] == ["base.json.gz", "old.json"]
