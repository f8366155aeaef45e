"""What a comparison's title says in parentheses: the windows, then each never-refused
difference (an upgrade's tokenizers), and nothing for a difference the user allowed by name."""

from __future__ import annotations

from pytest_niah.results.compare import Comparison
from pytest_niah.results.compatibility import NEVER_REFUSED, Difference

TOKENIZER = Difference("tokenizer", "a" * 64, "b" * 64)
SEED = Difference("seed", 1, 2)


def comparison(windows: str = "", *allowed: Difference) -> Comparison:
    return Comparison(
        deltas=(),
        paired={},
        unpaired_current=0,
        unpaired_baseline=0,
        allowed=allowed,
        windows=windows,
    )


def test_nothing_to_say_is_an_empty_note():
    assert comparison().title_notes == ""
    assert comparison("", SEED).title_notes == ""


def test_the_tokenizers_are_said_after_the_windows():
    assert comparison("", TOKENIZER).title_notes == NEVER_REFUSED["tokenizer"]
    both = comparison("the two runs measured different windows", SEED, TOKENIZER)
    assert both.title_notes == (
        f"the two runs measured different windows; {NEVER_REFUSED['tokenizer']}"
    )
