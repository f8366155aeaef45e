"""Chance: what a model that cannot tell a needle's haystack from its control scores.

AUC and the comparative ratio are both 0.5 for such a model. Whether a 95% interval can
rule chance out is read off its lower bound at the two digits every table shows, rounded
down, so that the effective length, the suggested gates, ``n/m`` and the report agree with
what a reader sees: a bound shown as ``0.50`` is at chance, and so is an interval wholly
below 0.5 (a model worse than a random one is no gate either).
"""

from __future__ import annotations

import math

CHANCE = 0.5
DIGITS = 2  # the digits a table shows of an interval's bound


def shown_low(low: float) -> float:
    """An interval's lower bound as the tables show it, rounded down (``0.579`` -> ``0.57``)."""
    scale = 10**DIGITS
    # round() first: 0.57 * 100 is 56.99999999999999 in binary floating point.
    return float(math.floor(round(low * scale, 9)) / scale)


def above_chance(low: float) -> bool:
    """Whether an interval with this lower bound rules chance out (an undefined one does not)."""
    return math.isfinite(low) and shown_low(low) > CHANCE


def at_chance(low: float) -> bool:
    """Whether an interval with this lower bound reaches chance (an undefined one is not known)."""
    return math.isfinite(low) and not above_chance(low)
