"""The run store's layout: folder names, which file holds a run, which files are runs."""

from __future__ import annotations

from pathlib import Path

from pytest_niah.naming import label_file_name
from pytest_niah.results.store_layout import run_key, saved_in, store_files

MACHINE = {"system": "Linux", "machine": "x86_64", "python_implementation": "CPython",
           "python_version": "3.11.7"}  # fmt: skip


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    return path


def test_a_run_key_is_the_labels_file_name_then_the_machine_id():
    assert run_key("packaged-minilm", MACHINE) == "packaged-minilm/Linux-x86_64-cp311"
    assert run_key("a/b [x]", MACHINE) == f"{label_file_name('a/b [x]')}/Linux-x86_64-cp311"


def test_a_run_is_read_from_its_compressed_file_first_then_the_plain_one(tmp_path):
    assert saved_in(tmp_path, "base") is None
    plain = _touch(tmp_path / "base.json")
    assert saved_in(tmp_path, "base") == plain
    packed = _touch(tmp_path / "base.json.gz")
    assert saved_in(tmp_path, "base") == packed
    (tmp_path / "dir.json.gz").mkdir()
    assert saved_in(tmp_path, "dir") is None  # a folder is no run


def test_store_files_are_the_runs_of_the_labels_and_machine_asked_sorted(tmp_path):
    a = label_file_name("model-a")
    b = label_file_name("model [b]")
    runs = [
        _touch(tmp_path / a / "m1" / "z.json.gz"),
        _touch(tmp_path / a / "m1" / "a.json"),
        _touch(tmp_path / a / "m2" / "c.json.gz"),
        _touch(tmp_path / b / "m1" / "d.json.gz"),
    ]
    # Not runs: another suffix, a bare suffix, hidden files and folders, a temp file.
    _touch(tmp_path / a / "m1" / "notes.txt")
    _touch(tmp_path / a / "m1" / ".json.gz")
    _touch(tmp_path / a / "m1" / ".hidden.json.gz")
    _touch(tmp_path / a / ".m3" / "e.json.gz")
    _touch(tmp_path / ".trash" / "m1" / "f.json.gz")
    _touch(tmp_path / a / "m1" / ".x.json.gz.tmp-1-2")
    _touch(tmp_path / "loose.json.gz")  # a file at the top is no model folder
    assert store_files(tmp_path) == sorted(runs)
    assert store_files(tmp_path, ["model [b]"]) == [runs[3]]
    assert store_files(tmp_path, ["model-a"], machine="m2") == [runs[2]]
    assert store_files(tmp_path, machine="m1") == sorted([runs[0], runs[1], runs[3]])
    assert store_files(tmp_path / "missing") == []
