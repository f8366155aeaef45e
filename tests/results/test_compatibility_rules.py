"""results/compatibility.py: which draws two runs share (#46.4 mutation draw)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_niah.results.compatibility import Difference, no_common_draw


def run(seed: int = 0, seeds: tuple[int, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(config=SimpleNamespace(seed=seed, seeds=seeds))


@pytest.mark.parametrize(
    ("current", "baseline"),
    [
        (run(seeds=(1, 2)), run(seed=2)),  # draw 2 pairs with a --niah-seed=2 run
        (run(seeds=(1, 2)), run(seeds=(2, 3))),
        (run(seed=1), run(seed=2)),  # two single draws pair cell by cell, whatever seeds
    ],
)
def test_runs_that_share_a_draw_or_pair_cell_by_cell_have_a_draw_in_common(current, baseline):
    # Found (mutation seed 1954973815, compatibility.py:231 `or` -> `and`).
    assert no_common_draw(current, baseline) == ""  # type: ignore[arg-type]


def test_runs_of_several_draws_with_none_in_common_are_told_so():
    said = no_common_draw(run(seeds=(1, 2)), run(seed=3))  # type: ignore[arg-type]
    assert said.startswith("no haystack draw in common: this run drew --niah-seeds=1,2, the")
    assert "--niah-seed=3 (one draw)" in said


def test_only_a_64_character_hash_is_shortened_in_a_difference():
    """A fingerprint (64 hex characters) reads as its first 12; any other value, a list of
    lengths whose text happens to be 64 characters long included, is shown whole."""
    # Found (mutation seed 1741474656, compatibility.py:144): without the str check, a value
    # whose text was 64 characters long was cut to 12.
    digest = "ab" * 32
    lengths = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 12]
    assert len(str(lengths)) == 64
    said = Difference("lengths", lengths, digest).describe()
    assert said.startswith(f"lengths: {lengths} here, abababababab in the baseline")
    assert digest not in said
