"""How numbers are shown in tables and messages: fixed digits, ``nan`` for a missing value."""

from __future__ import annotations

import math


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table: fixed digits, ``nan`` for missing."""
    return "nan" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def signed(value: float, digits: int) -> str:
    """A change, with its sign: ``+0.012``, ``-0.300``, ``nan``."""
    return "nan" if math.isnan(value) else f"{value:+.{digits}f}"
