"""Gate expressions: ``--niah-min-auc``/``--niah-min-ratio`` thresholds, compare allowances.

:func:`parse_thresholds` reads one threshold for every length or per length
(``"0.55,128=0.7"``); :func:`parse_allowances` reads the largest drop of each metric a
comparison allows (``--niah-compare-fail=auc:0.02,ratio:5%``). Both give frozen values that
render back in the option's syntax, and raise :class:`~pytest_niah.errors.ConfigError` with
a value that works. :func:`parse_speed_fail` reads the fall of speed that
``--niah-speed-fail`` allows (``20%``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_niah.config.parsers import split_list
from pytest_niah.config.vocabulary import METRIC_ALIASES, METRIC_LABELS
from pytest_niah.errors import ConfigError


@dataclass(frozen=True)
class Thresholds:
    """A gate threshold: one default and optional per-length overrides."""

    default: float | None = None
    per_length: tuple[tuple[int, float], ...] = ()

    def at(self, length: int) -> float | None:
        """The threshold for ``length``, or ``None`` when that length is not gated."""
        return dict(self.per_length).get(length, self.default)

    def __bool__(self) -> bool:
        return self.default is not None or bool(self.per_length)

    def describe(self) -> str:
        """Render back in the option's syntax."""
        parts = [] if self.default is None else [repr(self.default)]
        parts += [f"{length}={value!r}" for length, value in self.per_length]
        return ",".join(parts) or "none"


def parse_thresholds(value: str | float | Mapping[int, float] | Thresholds | None) -> Thresholds:
    """A gate threshold: one value for every length, or per length.

    ``"0.6"`` gates every length at 0.6; ``"128=0.7,1024=0.6"`` gates only those lengths;
    ``"0.55,128=0.7"`` sets a default and overrides 128; empty or ``none`` gates nothing.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return Thresholds()
    if isinstance(value, Thresholds):
        return value
    if isinstance(value, (int, float)):
        return Thresholds(default=_unit(value))
    if isinstance(value, Mapping):
        return Thresholds(per_length=tuple(sorted((int(k), _unit(v)) for k, v in value.items())))
    default: float | None = None
    per_length: dict[int, float] = {}
    for item in split_list(value):
        if "=" not in item:
            if default is not None:
                raise ConfigError(
                    f"two default thresholds ({default:g} and {item})",
                    "keep one, and write per-length values as LENGTH=VALUE",
                )
            default = _unit(item)
            continue
        key, _, number = item.partition("=")
        try:
            length = int(key)
        except ValueError:
            raise ConfigError(
                f"{item!r} has no whole-number length before '='", "write e.g. '128=0.7'"
            ) from None
        if length in per_length:
            raise ConfigError(
                f"length {length} is given two thresholds ({per_length[length]:g} and "
                f"{number.strip()})",
                "keep one",
            )
        per_length[length] = _unit(number)
    return Thresholds(default=default, per_length=tuple(sorted(per_length.items())))


def _unit(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{value!r} is not a number", "give a value in 0..1") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ConfigError(f"{number:g} is out of range", "give a value in 0..1")
    return number


@dataclass(frozen=True)
class Allowance:
    """One ``--niah-compare-fail`` item: the largest drop of a metric to allow.

    Attributes:
        metric: A key of :data:`~pytest_niah.config.vocabulary.METRIC_LABELS`.
        amount: The allowed drop: a percentage of the baseline's value when ``relative``
            (``5.0`` for ``5%``), else in the metric's own units.
        relative: Whether ``amount`` is a percentage.
    """

    metric: str
    amount: float
    relative: bool

    def allowed(self, baseline: float) -> float:
        """The largest drop allowed from ``baseline`` (a share of its magnitude if relative)."""
        return self.amount / 100.0 * abs(baseline) if self.relative else self.amount

    def describe(self) -> str:
        """The allowance in words, e.g. ``AUC may fall at most 0.02``."""
        label = METRIC_LABELS[self.metric]
        if self.relative:
            return f"{label} may fall at most {self.amount:g}% of the baseline"
        return f"{label} may fall at most {self.amount:g}"

    def expression(self) -> str:
        """Back in the option's syntax, e.g. ``auc:0.02`` or ``comparative_ratio:5%``."""
        return f"{self.metric}:{self.amount:g}{'%' if self.relative else ''}"


_ALLOWANCE_EXAMPLE = "e.g. 'auc:0.02,ratio:5%'"


def parse_allowances(value: str) -> tuple[Allowance, ...]:
    """``--niah-compare-fail``: comma-separated ``METRIC:AMOUNT`` items.

    ``auc:0.02`` fails when AUC falls by more than 0.02; ``ratio:5%`` when the comparative
    ratio falls by more than 5% of the baseline's value. Metric names: the keys of
    :data:`~pytest_niah.config.vocabulary.METRIC_ALIASES` (any case; ``-`` for ``_``).
    """
    items = [item.strip() for item in str(value).split(",")]
    if not any(items):
        raise ConfigError(f"{value!r} holds no expression", f"give {_ALLOWANCE_EXAMPLE}")
    return tuple(_allowance(item) for item in items if item)


def _allowance(item: str) -> Allowance:
    name, colon, amount_text = item.partition(":")
    if not colon:
        raise ConfigError(
            f"{item!r} has no ':'",
            "write METRIC:AMOUNT, e.g. 'auc:0.02' (an absolute drop) or 'ratio:5%' (a drop "
            "relative to the baseline)",
        )
    metric = METRIC_ALIASES.get(name.strip().lower().replace("-", "_"))
    if metric is None:
        raise ConfigError(
            f"{item!r}: unknown metric {name.strip()!r}",
            f"choose from {', '.join(METRIC_ALIASES)}",
        )
    amount_text = amount_text.strip()
    relative = amount_text.endswith("%")
    try:
        amount = float(amount_text.removesuffix("%"))
    except ValueError:
        raise ConfigError(
            f"{item!r}: {amount_text!r} is not a number", "give a drop such as 0.02 or 5%"
        ) from None
    if not math.isfinite(amount) or amount < 0:
        raise ConfigError(
            f"{item!r}: the allowed drop must be a finite number >= 0", "give e.g. 0.02 or 5%"
        )
    if relative and amount > 100:
        raise ConfigError(f"{item!r}: a relative drop cannot exceed 100%", "give e.g. 5%")
    return Allowance(metric, amount, relative)


def parse_speed_fail(value: Any) -> float:
    """``20%`` -> ``20.0``: the fall of relative_speed that ``--niah-speed-fail`` allows.

    The % sign is required: a bare ``0.2`` could mean 0.2% or 20%. 100% or more would let
    any speed pass, so it is refused too.
    """
    text = str(value).strip()
    hint = "give the fall allowed as a percentage below 100%, e.g. 20%"
    if not text.endswith("%"):
        raise ConfigError(f"{text!r} is not a percentage", hint)
    try:
        amount = float(text.removesuffix("%"))
    except ValueError:
        raise ConfigError(f"{text!r} is not a percentage", hint) from None
    if not 0 <= amount < 100:  # NaN fails this too
        raise ConfigError(f"{text!r} is out of range (0% to under 100%)", hint)
    return amount
