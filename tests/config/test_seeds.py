"""--niah-seeds: the draws a run pools, sorted and unique (NiahConfig.draws)."""

from __future__ import annotations

import pytest

from pytest_niah.config.bounded_numbers import MAX_SEED, MAX_SEEDS, parse_seeds
from pytest_niah.config.niah import NiahConfig
from pytest_niah.errors import ConfigError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([], ()),  # an empty ini linelist: the option unset
        ("7", (7,)),
        ("3, 1,2", (1, 2, 3)),  # sorted: the same draws in another order are the same run
        ("2,2,1", (1, 2)),
        (["9", "0"], (0, 9)),  # an ini linelist
        ((5, 4), (4, 5)),
        (f"0,{MAX_SEED}", (0, MAX_SEED)),
    ],
)
def test_seeds_are_sorted_and_unique(value, expected):
    assert parse_seeds(value) == expected


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "'' names no seed"),
        (" , ", "names no seed"),
        ("1,x", "'x' is not a whole number"),
        ("-1", "-1 is too small"),
        (f"{MAX_SEED + 1}", "is too large"),
        (",".join(map(str, range(MAX_SEEDS + 1))), f"{MAX_SEEDS + 1} seeds are too many"),
    ],
)
def test_bad_seeds_say_what_is_wrong(value, problem):
    with pytest.raises(ConfigError, match=problem):
        parse_seeds(value)


def test_as_many_seeds_as_allowed_pass():
    assert len(parse_seeds(",".join(map(str, range(MAX_SEEDS))))) == MAX_SEEDS


def test_without_seeds_one_untagged_draw_from_the_seed():
    config = NiahConfig(model="m", seed=11)
    assert config.draws == (None,)


def test_with_seeds_each_is_a_tagged_draw_and_seed_stays_the_bootstraps():
    config = NiahConfig(model="m", seed=11, seeds="5,2")
    assert config.seeds == (2, 5)
    assert config.draws == (2, 5)
    assert config.seed == 11
    assert NiahConfig.from_dict(config.to_dict()) == config
    assert config.fingerprint() != config.replace(seeds=(2,)).fingerprint()


def test_an_empty_seeds_option_is_a_usage_error_naming_it(pytester):
    """``--niah-seeds=$SEEDS`` with the variable unset: refused, not one quiet draw."""
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--niah-seeds=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "argument --niah-seeds: '' names no seed (an unset variable?)" in err
    assert "leave the option out" in err
