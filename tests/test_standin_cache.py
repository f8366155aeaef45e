"""The stand-ins kept between runs: built once per key, copied per session, never half-kept."""

from __future__ import annotations

import importlib.metadata
import shutil
from pathlib import Path

import pytest
from standin_cache import BOOKS, BUILT_BY, build_key, kept_build


def _counting_build(calls: list[Path]):
    def build(folder: Path) -> None:
        calls.append(folder)
        folder.mkdir(parents=True)
        (folder / "tokenizer.json").write_text("{}")

    return build


def test_a_kept_build_is_built_once_and_copied_into_each_session(tmp_path: Path) -> None:
    calls: list[Path] = []
    cache = tmp_path / "cache"
    cache.mkdir()
    first = kept_build(cache, "v3", _counting_build(calls), tmp_path / "one")
    (first / "written-by-a-test").write_text("x")
    second = kept_build(cache, "v3", _counting_build(calls), tmp_path / "two")
    assert len(calls) == 1
    assert first != second
    assert (second / "tokenizer.json").read_text() == "{}"
    assert not (second / "written-by-a-test").exists()  # a test's writes stay in its session
    assert sorted(p.name for p in cache.iterdir()) == ["v3"]  # no work folder left


@pytest.mark.parametrize("cached", [True, False])
def test_a_build_asked_for_twice_in_one_session_is_the_same_folder(
    tmp_path: Path, cached: bool
) -> None:
    # Found (the full suite, two tests asking for the v4 stand-in in one worker): the
    # second copy into the session's folder failed, the first copy being there.
    calls: list[Path] = []
    cache = tmp_path / "cache"
    cache.mkdir()
    where = cache if cached else None
    first = kept_build(where, "v4", _counting_build(calls), tmp_path / "session")
    (first / "written-by-a-test").write_text("x")
    again = kept_build(where, "v4", _counting_build(calls), tmp_path / "session")
    assert again == first and (again / "written-by-a-test").exists()
    assert len(calls) == 1


def test_without_a_cache_every_session_builds_its_own(tmp_path: Path) -> None:
    calls: list[Path] = []
    kept_build(None, "v3", _counting_build(calls), tmp_path / "one")
    kept_build(None, "v3", _counting_build(calls), tmp_path / "two")
    assert calls == [tmp_path / "one" / "v3", tmp_path / "two" / "v3"]


def test_a_build_that_loses_the_race_is_dropped_and_the_kept_one_copied(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()

    def racing_build(folder: Path) -> None:
        # Another process keeps its build while this one is still building.
        (cache / "v3").mkdir()
        (cache / "v3" / "tokenizer.json").write_text("theirs")
        folder.mkdir()
        (folder / "tokenizer.json").write_text("ours")

    copied = kept_build(cache, "v3", racing_build, tmp_path / "session")
    assert (copied / "tokenizer.json").read_text() == "theirs"
    assert sorted(p.name for p in cache.iterdir()) == ["v3"]


def test_a_build_that_fails_leaves_nothing_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()

    def failing_build(folder: Path) -> None:
        folder.mkdir()
        (folder / "half.json").write_text("{")
        raise RuntimeError("sentencepiece failed")

    with pytest.raises(RuntimeError, match="sentencepiece failed"):
        kept_build(cache, "v3", failing_build, tmp_path / "session")
    assert list(cache.iterdir()) == []


def _repo_copy(tmp_path: Path) -> Path:
    repo = Path(__file__).resolve().parents[1]
    copy = tmp_path / "repo"
    for name in BUILT_BY:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(repo / name, copy / name)
    (copy / BOOKS).mkdir(parents=True)
    (copy / BOOKS / "book.txt").write_text("It was a dark and stormy night.")
    return copy


def test_the_key_changes_with_a_build_script_a_book_or_a_library_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_copy(tmp_path)
    key = build_key(repo)
    assert build_key(repo) == key
    script = repo / BUILT_BY[1]
    script.write_text(script.read_text() + "\n# changed\n")
    changed_script = build_key(repo)
    (repo / BOOKS / "book.txt").write_text("It was a bright cold day in April.")
    changed_book = build_key(repo)
    (repo / BOOKS / "book.txt").rename(repo / BOOKS / "other.txt")
    renamed_book = build_key(repo)
    real_version = importlib.metadata.version

    def other_tokenizers(name: str) -> str:
        return "0.0.1" if name == "tokenizers" else real_version(name)

    monkeypatch.setattr(importlib.metadata, "version", other_tokenizers)
    changed_library = build_key(repo)
    keys = [key, changed_script, changed_book, renamed_book, changed_library]
    assert len(set(keys)) == len(keys)
