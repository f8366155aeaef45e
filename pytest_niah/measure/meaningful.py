"""When a run's normalized similarity means nothing (shown ``n/m`` in every table).

Normalized similarity divides each case's score by its needle's own score against the
question. It says how much of the needle a haystack keeps only when the needle can be told
apart at all: at chance, haystacks match the question as well without a needle, and a
model at chance reads about 2.0, the largest number of the table. Such a value shows
:data:`NOT_MEANINGFUL` instead, as does one where most cases were left out (needle alone
below the floor: the few left divide by little more than the floor). The run's own tables
and its comparisons with a baseline apply the same rule.
"""

from __future__ import annotations

from pytest_niah.measure.chance import at_chance
from pytest_niah.measure.records import IntervalRow, MetricRow

__all__ = ["AT_CHANCE", "MOSTLY_LEFT_OUT", "NOT_MEANINGFUL", "normalized_not_meaningful"]

NOT_MEANINGFUL = "n/m"
MOSTLY_LEFT_OUT = (
    "most cases' needle alone barely matches its question, and the few left divide by next "
    "to nothing"
)
AT_CHANCE = "the AUC interval reaches 0.5 (chance): haystacks match as well without the needle"


def normalized_not_meaningful(row: MetricRow, auc: IntervalRow | None = None) -> str | None:
    """Why a row's normalized similarity means nothing, or ``None`` when it means something.

    Args:
        row: The per-length metric row.
        auc: The row's AUC interval; a row whose interval reaches 0.5 is at chance. Without
            an interval (or with an undefined one) only the left-out rule applies.
    """
    counted = row.n_cases - row.duplicates - row.invalid
    if 2 * row.norm_excluded > counted:
        return MOSTLY_LEFT_OUT
    if auc is not None and at_chance(auc.low):
        return AT_CHANCE
    return None
