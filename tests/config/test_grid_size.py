"""The size of a grid, counted from its config before anything loads (issue 23)."""

from __future__ import annotations

import pytest

from pytest_niah.config.grid_size import LARGE_CASES, grid_size
from pytest_niah.config.niah import NiahConfig
from pytest_niah.haystacks.grid import case_params
from pytest_niah.inputs.needles import builtin_needle_set


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"arms": "onehop,literal,expand100", "scoring": "whole,chunk-max", "positions": 7},
        {"lengths": "128,4096", "orders": "default", "positions": 1},
        {"lengths": "128,256", "seeds": "1,2,3"},
    ],
)
def test_cases_are_the_case_tests_the_plugin_collects(changes):
    needles = builtin_needle_set()
    config = NiahConfig(model="lexical:tfidf", **changes)
    assert grid_size(config, len(needles.groups)).cases == len(case_params("m", config, needles))


def test_the_default_grid_is_usual_and_says_its_size():
    size = grid_size(NiahConfig(model="m"), 28)
    assert (size.cases, size.haystacks) == (3920, 28 * 2 * 10 * 7 + 28 * 7)
    assert size.tokens == (28 * 2 * 10 + 28) * (128 + 256 + 512 + 1024 + 2048 + 4096 + 8192)
    assert not size.is_large and size.warning() is None
    assert size.describe().startswith("3,920 cases, 4,116 haystacks, 9.6M tokens, about ")


def test_every_draw_of_several_seeds_is_a_whole_grid():
    one = grid_size(NiahConfig(model="m"), 28)
    three = grid_size(NiahConfig(model="m", seeds="1,2,3"), 28)
    assert (three.cases, three.haystacks, three.tokens) == (
        3 * one.cases,
        3 * one.haystacks,
        3 * one.tokens,
    )


def test_a_grid_far_larger_than_usual_states_cases_tokens_and_memory():
    config = NiahConfig(model="m", positions=1000, lengths="128,1000000", controls=100)
    size = grid_size(config, 28)
    assert size.is_large and size.cases > LARGE_CASES
    warning = size.warning()
    assert warning is not None
    assert "112,000 cases" in warning and "M tokens" in warning and "GiB of memory" in warning
    assert "--niah-positions" in warning
    # the memory estimate grows with the tokens: a million-token grid needs far more
    assert size.memory_bytes > 100 * grid_size(NiahConfig(model="m"), 28).memory_bytes


def test_arms_that_insert_the_same_needles_share_haystacks():
    one = grid_size(NiahConfig(model="m", arms="onehop"), 5)
    expanded = grid_size(NiahConfig(model="m", arms="onehop,expand100,expand250"), 5)
    assert expanded.haystacks == one.haystacks and expanded.cases == 3 * one.cases
    both = grid_size(NiahConfig(model="m", arms="onehop,literal"), 5)
    assert both.tokens > one.tokens


def test_maxsim_counts_a_token_vector_per_haystack_token():
    """v4's token vectors over the grid extended to 32K are far larger than usual in memory."""
    from pytest_niah.config.grid_size import BYTES_PER_TOKEN_VECTOR

    whole = grid_size(NiahConfig(model="m", lengths="128..32768"), 28)
    both = grid_size(NiahConfig(model="m", lengths="128..32768", scoring="whole,maxsim"), 28)
    assert both.tokens == whole.tokens and both.cases == 2 * whole.cases
    assert both.memory_bytes - whole.memory_bytes >= whole.tokens * BYTES_PER_TOKEN_VECTOR
    assert not whole.is_large and both.is_large  # about 38 GiB: said before it starts
    assert "GiB of memory" in (both.warning() or "")
