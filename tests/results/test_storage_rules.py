"""Rules of results/storage.py that mutants found unchecked, beside test_storage*.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah.errors import ConfigError
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
