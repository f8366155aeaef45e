"""Parsers of bounded numbers: counts, haystack lengths, seconds and ``K/N`` shards.

Every count option has a bound (:class:`WholeNumber`): a value past it would exhaust memory
or time without a word. The bounds are named here (``MAX_*``) so the option table's help and
the errors state the same number. Errors are :class:`~pytest_niah.errors.ConfigError` with
a value that works as the hint; the caller names the option
(:func:`~pytest_niah.config.parsers.named`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pytest_niah.config.parsers import short_repr, split_list
from pytest_niah.errors import ConfigError

MIN_LENGTH = 16
MAX_LENGTH = 1_000_000
MAX_POSITIONS = 1_000
"""The most needle positions per haystack (a position every 1,000th of the filler)."""
MAX_CONTROLS = 100
"""The most no-needle control haystacks per question and length."""
MAX_BOOTSTRAP = 100_000
"""The most bootstrap resamples (100,000 gives intervals to the third decimal)."""
MAX_SHARDS = 1_000
"""The most jobs a run can be split into (``--niah-shard=K/N``)."""
MAX_SEED = 2**63 - 1
"""The largest seed: it fits every integer type a seed is stored in."""
MAX_SEEDS = 100
"""The most haystack draws one run pools (``--niah-seeds``)."""
MAX_BATCH = 100_000
"""The most texts per encode batch, or requests in flight to a remote server."""
MAX_TOKEN_BUDGET = 100_000_000
"""The most padded tokens per encode batch."""
MAX_DIGITS = 17
"""The most digits a snapshot float keeps: 17 significant digits already hold every double."""
MAX_SECONDS = 86_400.0
"""The longest wait for one response of a remote server: a day."""


@dataclass(frozen=True)
class WholeNumber:
    """A parser of whole numbers from ``minimum`` to ``maximum`` (both included).

    Every count option has a bound: a value past it would exhaust memory or time without a
    word. :meth:`bounds` states it in the option's help; the error states it too.

    Attributes:
        minimum: The smallest value allowed.
        maximum: The largest value allowed.
        optional: Empty text, ``none`` or ``None`` mean "not set" (parsed as ``None``).
    """

    minimum: int = 1
    maximum: int = MAX_LENGTH
    optional: bool = False

    def bounds(self) -> str:
        """The allowed range in words, e.g. ``1..1,000``."""
        return f"{self.minimum:,}..{self.maximum:,}"

    def __call__(self, value: Any) -> int | None:
        """The number ``value`` gives (``None`` for "not set" when optional)."""
        if self.optional and (
            value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))
        ):
            return None
        example = f"give e.g. {max(self.minimum, 1)}"
        if isinstance(value, bool) or (isinstance(value, float) and not float(value).is_integer()):
            raise ConfigError(f"{value!r} is not a whole number", example)
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{short_repr(value)} is not a whole number", example) from None
        if number < self.minimum:
            raise ConfigError(f"{number} is too small", f"give a number of at least {self.minimum}")
        if number > self.maximum:
            raise ConfigError(
                f"{short_repr(number)} is too large (the most is {self.maximum:,})",
                f"give a number in {self.bounds()}",
            )
        return number


def int_parser(minimum: int = 1, maximum: int = MAX_LENGTH) -> Callable[[str | int], int]:
    """A parser of whole numbers in ``minimum..maximum`` (see :class:`WholeNumber`)."""
    return cast("Callable[[str | int], int]", WholeNumber(minimum, maximum))


def optional_int_parser(
    minimum: int = 1, maximum: int = MAX_LENGTH
) -> Callable[[str | int | None], int | None]:
    """Like :func:`int_parser`; empty text, ``none`` or ``None`` mean "not set"."""
    return WholeNumber(minimum, maximum, optional=True)


def parse_lengths(value: str | Sequence[int | str]) -> tuple[int, ...]:
    """Haystack lengths such as ``"128,512,2048"``: sorted, unique, each 16..1,000,000.

    An item ``A..B`` is the doubling grid from ``A`` to ``B`` (``128..32768`` is 128, 256, ...,
    32768): the default grid is ``128..8192``, and ``128..32768`` extends it to a 32K window.
    """
    items: Sequence[Any] = split_list(value) if isinstance(value, str) else list(value)
    example = "give e.g. '128,256,512' or '128..32768'"
    if not items:
        raise ConfigError("the list is empty", example)
    lengths = []
    for item in items:
        if isinstance(item, str) and ".." in item:
            lengths += doubling_range(item)
            continue
        if isinstance(item, bool) or (isinstance(item, float) and not item.is_integer()):
            raise ConfigError(f"{item!r} is not a whole number of tokens", example)
        try:
            length = int(item)
        except (TypeError, ValueError):
            raise ConfigError(f"{item!r} is not a whole number of tokens", example) from None
        if not MIN_LENGTH <= length <= MAX_LENGTH:
            raise ConfigError(
                f"{length} is out of range",
                f"each length must be {MIN_LENGTH}..{MAX_LENGTH:,} tokens; {example}",
            )
        lengths.append(length)
    return tuple(sorted(set(lengths)))


def parse_seeds(value: str | Sequence[int | str]) -> tuple[int, ...]:
    """Haystack draws such as ``"1,2,3"``: sorted, unique, each 0..2**63-1; an empty list: none.

    Sorted so that the same seeds in another order are the same run (the same case order).
    An empty text is refused: ``--niah-seeds=$SEEDS`` with the variable unset would
    otherwise quietly measure one draw.
    """
    items: Sequence[Any] = split_list(value) if isinstance(value, str) else list(value)
    if isinstance(value, str) and not items:
        raise ConfigError(
            f"{short_repr(value)} names no seed (an unset variable?)",
            "give the draws to pool, e.g. 1,2,3, or leave the option out for one draw from "
            "--niah-seed",
        )
    seed = WholeNumber(0, MAX_SEED)
    seeds = sorted({cast(int, seed(item)) for item in items})
    if len(seeds) > MAX_SEEDS:
        raise ConfigError(
            f"{len(seeds):,} seeds are too many (the most is {MAX_SEEDS})",
            "pool fewer haystack draws, e.g. --niah-seeds=1,2,3",
        )
    return tuple(seeds)


def doubling_range(item: str) -> list[int]:
    """``"128..32768"`` -> ``[128, 256, ..., 32768]``: each length twice the one before.

    Raises:
        ConfigError: not two whole numbers, out of 16..1,000,000, the first past the second, or
            a last length the doubling never reaches (the hint names the two it passes).
    """
    example = "give e.g. '128..32768' (128, 256, ..., 32768)"
    match = re.fullmatch(r"\s*(\d{1,30})\s*\.\.\s*(\d{1,30})\s*", item)
    if match is None:
        raise ConfigError(
            f"{short_repr(item)} is not a range of two whole numbers of tokens", example
        )
    first, last = int(match[1]), int(match[2])
    for length in (first, last):
        if not MIN_LENGTH <= length <= MAX_LENGTH:
            raise ConfigError(
                f"{short_repr(item)}: {length:,} is out of range",
                f"each length must be {MIN_LENGTH}..{MAX_LENGTH:,} tokens; {example}",
            )
    if first > last:
        raise ConfigError(
            f"{short_repr(item)} runs backwards ({first:,} is more than {last:,})",
            f"put the shortest length first: '{last}..{first}'",
        )
    lengths = [first]
    while lengths[-1] < last:
        lengths.append(lengths[-1] * 2)
    if lengths[-1] != last:
        below, above = lengths[-2], lengths[-1]
        ends = f"'{first}..{below}'" + (f" or '{first}..{above}'" if above <= MAX_LENGTH else "")
        raise ConfigError(
            f"{short_repr(item)}: doubling from {first:,} never reaches {last:,} (it goes "
            f"{below:,}, {above:,})",
            f"end the range on a doubling of {first:,}: {ends}; or list lengths with commas",
        )
    return lengths


def parse_seconds(value: str | float) -> float:
    """A positive, finite number of seconds (``"60"``, ``"2.5"``)."""
    if isinstance(value, bool):
        raise ConfigError(f"{value!r} is not a number of seconds", "give e.g. 60")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{value!r} is not a number of seconds", "give e.g. 60") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{value!r} is not a positive number of seconds", "give e.g. 60")
    if seconds > MAX_SECONDS:
        raise ConfigError(
            f"{value!r} seconds is too long (the most is {MAX_SECONDS:,.0f}, a day)",
            "give e.g. 60",
        )
    return seconds


def parse_shard(value: str) -> tuple[int, int] | None:
    """``"2/3"`` -> ``(2, 3)``: job K of N, ``1 <= K <= N``; empty -> ``None``."""
    if not str(value).strip():
        return None
    match = re.fullmatch(r"\s*(\d{1,30})\s*/\s*(\d{1,30})\s*", str(value))
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise ConfigError(
            f"{short_repr(value)} is not K/N with 1 <= K <= N",
            "give this job's number and the number of jobs, e.g. --niah-shard=2/4",
        )
    if int(match[2]) > MAX_SHARDS:
        raise ConfigError(
            f"{short_repr(value)}: {int(match[2]):,} jobs are too many "
            f"(the most is {MAX_SHARDS:,})",
            f"split the run into at most {MAX_SHARDS:,} jobs, e.g. --niah-shard=2/4",
        )
    return int(match[1]), int(match[2])
