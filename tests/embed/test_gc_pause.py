"""A model is imported and loaded with Python's cycle collector paused, and given back after."""

from __future__ import annotations

import builtins
import gc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_niah.embed.device import Placement
from pytest_niah.embed.gc_pause import collection_paused
from pytest_niah.embed.st_model import load_model, sentence_transformer_class
from pytest_niah.errors import EmbedderError


def test_no_collection_runs_inside_and_the_collector_is_back_after() -> None:
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_gives_the_collector_back() -> None:
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("a failed load")
    assert gc.isenabled()


def test_a_collector_off_before_stays_off_and_a_nested_pause_leaves_it_to_the_outer() -> None:
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with collection_paused():
        with collection_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def static_request(folder: Path) -> Any:
    return SimpleNamespace(
        name=str(folder),
        path=str(folder),
        static=True,
        trust_remote_code=False,
        model_kwargs={},
        encode_kwargs={},
        max_seq_length=None,
        scorings=None,
    )


def test_a_model_is_built_with_the_collector_paused(tiny_static_model: Path) -> None:
    real, seen = sentence_transformer_class(), []

    def loader(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    placement = Placement(("cpu",), "float32")
    model = load_model(static_request(tiny_static_model), loader, placement, None, lambda: None)
    assert seen == [False] and gc.isenabled()
    assert model.encode(["a lighthouse"]).shape[0] == 1


def test_a_model_that_fails_to_load_gives_the_collector_back(tiny_static_model: Path) -> None:
    def loader(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no such weights")

    placement = Placement(("cpu",), "float32")
    with pytest.raises(EmbedderError):
        load_model(static_request(tiny_static_model), loader, placement, None, lambda: None)
    assert gc.isenabled()


def test_sentence_transformers_is_imported_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_import, seen = builtins.__import__, []

    def recording_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "sentence_transformers":
            seen.append(gc.isenabled())
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", recording_import)
    sentence_transformer_class()
    monkeypatch.undo()
    assert seen == [False] and gc.isenabled()


def test_the_loaded_model_is_checked_with_the_collector_paused(
    tiny_static_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_niah.embed.st_model as st_model

    real_check, seen = st_model.check_vocabulary, []

    def recording_check(*args: Any) -> None:
        seen.append(gc.isenabled())
        real_check(*args)

    monkeypatch.setattr(st_model, "check_vocabulary", recording_check)
    placement = Placement(("cpu",), "float32")
    request = static_request(tiny_static_model)
    load_model(request, sentence_transformer_class(), placement, None, lambda: None)
    assert seen == [False] and gc.isenabled()
