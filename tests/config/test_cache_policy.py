"""The one cache policy: which caches a run reads and writes, and where."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_niah.config.cache_policy import RESULTS_FOLDER, CachePolicy
from pytest_niah.config.paths import CACHE_ENV, CACHE_FILE


def test_an_enabled_policy_puts_every_cache_of_work_under_its_root(tmp_path):
    policy = CachePolicy(tmp_path)
    assert policy.enabled
    assert policy.books == tmp_path
    assert policy.work == tmp_path
    assert policy.embeddings == tmp_path / CACHE_FILE
    assert policy.results == tmp_path / RESULTS_FOLDER
    assert policy.sentence_counts == tmp_path
    assert policy.model_hashes == tmp_path


def test_no_cache_keeps_only_the_books(tmp_path):
    # --niah-no-cache: a run writes no cache of work, sharded or not; books are inputs.
    policy = CachePolicy(tmp_path, enabled=False)
    assert policy.books == tmp_path
    assert policy.work is None
    assert policy.embeddings is None
    assert policy.results is None
    assert policy.sentence_counts is None
    assert policy.model_hashes is None


def test_no_root_keeps_nothing():
    policy = CachePolicy()
    assert (policy.books, policy.work, policy.embeddings, policy.results) == (None,) * 4
    assert policy.sentence_counts is None and policy.model_hashes is None


def test_the_api_policy_caches_where_it_is_told_else_under_the_default_root(tmp_path, monkeypatch):
    assert CachePolicy.resolve(tmp_path) == CachePolicy(tmp_path, True)
    assert CachePolicy.resolve(str(tmp_path), use_cache=False) == CachePolicy(tmp_path, False)
    # Found (#34.3): None meant no cache here and the user cache in run_experiment. One
    # meaning now, the options' one: the default root; no cache is use_cache=False.
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert CachePolicy.resolve(None) == CachePolicy(tmp_path / "env", True)
    assert CachePolicy.resolve(None) == CachePolicy.from_options("", no_cache=False)
    assert CachePolicy.resolve(None, use_cache=False).work is None


def test_the_options_policy_defaults_to_the_cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert CachePolicy.from_options("", no_cache=False) == CachePolicy(tmp_path / "env", True)
    assert CachePolicy.from_options(str(tmp_path / "given"), no_cache=True) == CachePolicy(
        tmp_path / "given", False
    )
    assert CachePolicy.from_options("", no_cache=True).work is None
    assert isinstance(CachePolicy.from_options("", no_cache=False).root, Path)


def test_a_policy_is_decided_once():
    with pytest.raises(dataclasses.FrozenInstanceError):
        CachePolicy().enabled = False  # type: ignore[misc]
