"""Rules of results/run_file.py that mutants found unchecked, beside test_storage*.py."""

from __future__ import annotations

import gzip
from datetime import datetime, timezone

import pytest

from pytest_niah.errors import ConfigError
from pytest_niah.results.run_file import check_name, parse_saved_at, run_bytes

T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def test_a_saved_at_ending_in_a_small_z_is_utc() -> None:
    # Found (mutation, run_file.py:141 the "Z" suffix rule deleted): ISO 8601 allows "z" as
    # well as "Z", which datetime.fromisoformat reads only as "Z" (and on Python 3.10 not at
    # all), so a run saved elsewhere with either is still read as UTC.
    assert parse_saved_at("2024-01-02T03:04:05z") == T0
    assert parse_saved_at(" 2024-01-02T03:04:05Z\n") == T0


def test_a_run_name_holding_a_nul_byte_is_refused_as_no_plain_file_name() -> None:
    # Found (mutation, run_file.py:193 the NUL check dropped): no file system takes a NUL in
    # a name, so such a name is refused up front, saying why, not later by a ValueError.
    with pytest.raises(ConfigError, match="not a plain file name"):
        check_name("base\0line")


def test_a_run_name_the_file_system_cannot_encode_is_refused_saying_so() -> None:
    # Found (mutation, run_file.py:201 the encoding refusal deleted): a lone surrogate
    # (one surrogateescape cannot carry) has no bytes on this file system; the name is
    # refused with a ConfigError, not an UnboundLocalError a line later.
    with pytest.raises(ConfigError, match="no encoding on this file system"):
        check_name("base\ud800line")


def test_a_saved_runs_text_is_sorted_json_indented_by_one_space() -> None:
    # Found (mutation, run_file.py:98 indent=1 -> 2): the file's bytes are a format kept
    # across versions, so a run saved again by a newer version is the same file (git sees
    # no change): keys sorted, one space per level, gzip without a time.
    def saved() -> bytes:
        return run_bytes(
            {"lengths": [128]},
            name="base",
            label="model",
            machine={"os": "Linux"},
            saved_at=T0,
            commit={"id": "abc", "dirty": False},
        )

    data = saved()
    text = gzip.decompress(data).decode("utf-8")
    assert text.splitlines()[:4] == ["{", ' "commit": {', '  "dirty": false,', '  "id": "abc"']
    assert data[4:8] == b"\0\0\0\0"  # the gzip header's time
    assert data == saved()


def test_a_run_holding_a_value_that_is_not_a_number_is_never_written() -> None:
    # Found (mutation, run_file.py:98 allow_nan=False -> True): a saved run is strict JSON,
    # which the store's reader requires; a NaN would be written as a bare NaN token.
    with pytest.raises(ValueError):
        run_bytes(
            {"score": float("nan")},
            name="base",
            label="model",
            machine={},
            saved_at=T0,
            commit={},
        )
