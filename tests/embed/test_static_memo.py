"""A static model folder is read once per process, and every load still gets its own model.

The folder is a small model2vec model (tests/conftest.py's ``tiny_static_model``): what the
memo keeps and copies is the same for the packaged 276,326-token model, which takes seconds
to read.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_niah.embed.st_loading import static_embedding_class
from pytest_niah.embed.static_memo import StaticModelMemo, folder_key

TEXTS = ["The lighthouse keeper counted the gulls.", "Tea, sugar and a tin of biscuits."]


class CountingClass:
    """The real static embedding class, counting the folder reads that go through model2vec."""

    def __init__(self) -> None:
        self.real: Any = static_embedding_class()
        self.reads = 0

    def from_model2vec(self, source: str) -> Any:
        self.reads += 1
        return self.real.from_model2vec(source)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.real(*args, **kwargs)


@pytest.fixture(scope="module")
def static_folder(tiny_static_model: Path) -> Path:
    return tiny_static_model


def vectors(module: Any) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(modules=[module], device="cpu").encode(TEXTS)


def test_a_second_load_reads_nothing_and_embeds_the_same(static_folder: Path) -> None:
    memo, cls = StaticModelMemo(), CountingClass()
    first = memo.load(str(static_folder), static_folder, cls)
    second = memo.load(str(static_folder), static_folder, cls)
    assert cls.reads == 1
    assert type(second) is type(first)
    assert second.tokenizer.to_str() == first.tokenizer.to_str()
    assert (vectors(second) == vectors(first)).all()


def test_each_load_owns_its_tokenizer_and_weights(static_folder: Path) -> None:
    import torch

    memo, cls = StaticModelMemo(), CountingClass()
    first = memo.load(str(static_folder), static_folder, cls)
    before, truncation = vectors(first), first.tokenizer.truncation
    first.tokenizer.enable_truncation(max_length=2)  # what a run's window does
    with torch.no_grad():
        first.embedding.weight.mul_(0)  # what no run does, but a shared tensor would show
    second = memo.load(str(static_folder), static_folder, cls)
    third = memo.load(str(static_folder), static_folder, cls)
    assert second.tokenizer.truncation == truncation
    assert second.embedding.weight.data_ptr() != third.embedding.weight.data_ptr()
    assert (vectors(second) == before).all()


def test_a_folder_rewritten_in_place_is_read_again(static_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(static_folder, folder)
    memo, cls = StaticModelMemo(), CountingClass()
    memo.load(str(folder), folder, cls)
    config = folder / "config.json"
    stat = config.stat()
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    memo.load(str(folder), folder, cls)
    assert cls.reads == 2
    memo.load(str(folder), folder, cls)
    assert cls.reads == 2


def test_the_key_names_every_files_size_and_time(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("one")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_text("two!")
    where, files = folder_key(tmp_path)
    assert where == str(tmp_path.resolve())
    assert [(name, size) for name, size, _ in files] == [("a", 3), ("sub/b", 4)]
    before = folder_key(tmp_path)
    (tmp_path / "a").write_text("ONE")  # same size: the time tells
    stat = (tmp_path / "a").stat()
    os.utime(tmp_path / "a", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000))
    assert folder_key(tmp_path) != before


def test_only_the_last_folders_are_kept_and_an_unknown_folder_is_never(
    static_folder: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(static_folder, other)
    memo, cls = StaticModelMemo(kept=1), CountingClass()
    memo.load(str(static_folder), static_folder, cls)
    memo.load(str(other), other, cls)  # pushes the first out
    memo.load(str(static_folder), static_folder, cls)
    assert cls.reads == 3
    memo.load(str(static_folder), None, cls)  # no folder to key it by: read again
    assert cls.reads == 4
    memo.clear()
    memo.load(str(static_folder), static_folder, cls)
    assert cls.reads == 5


def test_the_plugin_loads_a_static_folder_through_the_memo(static_folder: Path) -> None:
    from pytest_niah.embed.st_backend import SentenceTransformerEmbedder
    from pytest_niah.embed.static_memo import STATIC_MODELS

    STATIC_MODELS.clear()
    first = SentenceTransformerEmbedder(str(static_folder), device="cpu")
    second = SentenceTransformerEmbedder(str(static_folder), device="cpu")
    a = first.model
    b = second.model
    assert a is not b and a[0] is not b[0]
    assert folder_key(static_folder) in STATIC_MODELS.read


def test_the_two_folders_used_last_are_kept_and_the_least_recently_used_goes(
    static_folder: Path, tmp_path: Path
) -> None:
    folders = {}
    for name in ("a", "b", "c"):
        folders[name] = tmp_path / name
        shutil.copytree(static_folder, folders[name])
    memo, cls = StaticModelMemo(), CountingClass()

    def load(name: str) -> None:
        memo.load(str(folders[name]), folders[name], cls)

    load("a")
    load("b")
    load("a")  # kept: "a" is now the one used last
    assert cls.reads == 2
    load("c")  # a third folder: "b", used least recently, goes
    assert cls.reads == 3
    load("a")
    load("c")
    assert cls.reads == 3
    load("b")
    assert cls.reads == 4


def test_what_a_load_read_cannot_be_changed_in_place() -> None:
    import dataclasses

    from pytest_niah.embed.static_memo import ReadModel

    kept = ReadModel(tokenizer_json="{}", weights=None, base_model=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        kept.tokenizer_json = "changed"  # type: ignore[misc]
