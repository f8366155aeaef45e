"""--niah-lengths=A..B: the doubling grid from A to B, e.g. 128..32768 for a 32K window."""

from __future__ import annotations

import pytest

from pytest_niah.config.bounded_numbers import MAX_LENGTH, doubling_range, parse_lengths
from pytest_niah.config.options import BY_NAME
from pytest_niah.errors import ConfigError


def test_the_default_grid_is_the_range_128_to_8192():
    assert BY_NAME["lengths"].default == parse_lengths("128..8192")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("128..32768", (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)),
        ("128..128", (128,)),
        (" 16 .. 64 ", (16, 32, 64)),
        ("128..512,300", (128, 256, 300, 512)),  # ranges and lengths mix
        ("100..400,128..256", (100, 128, 200, 256, 400)),
        (["128..256", "1000"], (128, 256, 1000)),  # an ini linelist
    ],
)
def test_a_range_doubles_from_its_first_length_to_its_last(value, expected):
    assert parse_lengths(value) == expected


@pytest.mark.parametrize(
    ("value", "problem", "hint"),
    [
        (
            "128..30000",
            "doubling from 128 never reaches 30,000 (it goes 16,384, 32,768)",
            "'128..16384' or '128..32768'",
        ),
        ("512..128", "runs backwards", "'128..512'"),
        ("8..64", "8 is out of range", f"16..{MAX_LENGTH:,} tokens"),
        (f"128..{2 * MAX_LENGTH}", "is out of range", f"16..{MAX_LENGTH:,} tokens"),
        ("128..", "is not a range of two whole numbers", "'128..32768'"),
        ("a..b", "is not a range of two whole numbers", "'128..32768'"),
        ("128...512", "is not a range of two whole numbers", "'128..32768'"),
    ],
)
def test_a_bad_range_says_what_is_wrong_and_which_range_works(value, problem, hint):
    with pytest.raises(ConfigError) as info:
        parse_lengths(value)
    assert problem in info.value.problem
    assert hint in info.value.hint


def test_the_longest_range_stays_within_the_bound():
    lengths = doubling_range(f"16..{16 * 2**15}")
    assert lengths[-1] == 524288 <= MAX_LENGTH and len(lengths) == 16
