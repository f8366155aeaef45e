"""Parsers of option and config values: text (or Python values) in, validated values out.

Every parser raises :class:`~pytest_niah.errors.ConfigError` whose problem says what is
wrong with the value and whose hint gives a value that works; the caller names the option
or field (:func:`named`). Only the standard library is imported: the plugin registers its
options in every pytest run, active or not.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_niah.config.vocabulary import METRIC_ALIASES, METRIC_LABELS
from pytest_niah.errors import ConfigError

T = TypeVar("T")

MIN_LENGTH = 16
MAX_LENGTH = 1_000_000
_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def named(what: str, parse: Callable[[Any], T], value: Any) -> T:
    """``parse(value)``, with ``what`` (an option or field name) leading any error."""
    try:
        return parse(value)
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc.problem}", exc.hint) from None


def split_list(value: str) -> list[str]:
    """The non-empty, stripped items of a comma list."""
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_text(value: str) -> str:
    """Any text, as given."""
    return str(value)


def parse_bool(value: str | bool) -> bool:
    """``true``/``false`` (also 1/0, yes/no, on/off; empty is false)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{value!r} is not a boolean", "use true or false")


def int_parser(minimum: int = 1) -> Callable[[str | int], int]:
    """A parser of whole numbers of at least ``minimum``."""

    def parse(value: str | int) -> int:
        if isinstance(value, bool) or (isinstance(value, float) and not float(value).is_integer()):
            raise ConfigError(f"{value!r} is not a whole number", f"give e.g. {max(minimum, 1)}")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"{value!r} is not a whole number", f"give e.g. {max(minimum, 1)}"
            ) from None
        if number < minimum:
            raise ConfigError(f"{number} is too small", f"give a number of at least {minimum}")
        return number

    return parse


def optional_int_parser(minimum: int = 1) -> Callable[[str | int | None], int | None]:
    """Like :func:`int_parser`; empty text, ``none`` or ``None`` mean "not set"."""
    parse_int = int_parser(minimum)

    def parse(value: str | int | None) -> int | None:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
            return None
        return parse_int(value)

    return parse


def parse_lengths(value: str | Sequence[int | str]) -> tuple[int, ...]:
    """Haystack lengths such as ``"128,512,2048"``: sorted, unique, each 16..1,000,000."""
    items: Sequence[Any] = split_list(value) if isinstance(value, str) else list(value)
    example = "give e.g. '128,256,512'"
    if not items:
        raise ConfigError("the list is empty", example)
    lengths = []
    for item in items:
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


def choices_parser(choices: Sequence[str]) -> Callable[[str | Sequence[str]], tuple[str, ...]]:
    """A parser of comma lists whose items come from ``choices`` (given order kept, no repeats)."""
    allowed = ", ".join(choices)

    def parse(value: str | Sequence[str]) -> tuple[str, ...]:
        items = split_list(value) if isinstance(value, str) else [str(v) for v in value]
        if not items:
            raise ConfigError("the list is empty", f"choose from {allowed}")
        unknown = [item for item in items if item not in choices]
        if unknown:
            raise ConfigError(
                f"unknown value {', '.join(map(repr, unknown))}", f"choose from {allowed}"
            )
        return tuple(dict.fromkeys(items))

    return parse


def choice_parser(choices: Sequence[str]) -> Callable[[str], str]:
    """A parser of one value from ``choices``."""

    def parse(value: str) -> str:
        if value not in choices:
            raise ConfigError(f"unknown value {value!r}", f"choose from {', '.join(choices)}")
        return value

    return parse


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
    return seconds


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_env_name(value: str) -> str:
    """The name of an environment variable (``OPENAI_API_KEY``), never a secret itself.

    The value is not repeated in the error: someone who passes the key instead of the
    variable's name must not see it printed (CI logs keep it).
    """
    text = str(value).strip()
    if not _ENV_NAME.fullmatch(text):
        raise ConfigError(
            "this is not the name of an environment variable (letters, digits and _, not "
            "starting with a digit); the value is not shown in case it is a key",
            "give the name of the variable that holds the key, e.g. OPENAI_API_KEY, never "
            "the key itself",
        )
    return text


def parse_shard(value: str) -> tuple[int, int] | None:
    """``"2/3"`` -> ``(2, 3)``: job K of N, ``1 <= K <= N``; empty -> ``None``."""
    if not str(value).strip():
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise ConfigError(
            f"{value!r} is not K/N with 1 <= K <= N",
            "give this job's number and the number of jobs, e.g. --niah-shard=2/4",
        )
    return int(match[1]), int(match[2])


def parse_names(value: str | Sequence[str]) -> tuple[str, ...]:
    """A comma list of names (needle group ids or categories); empty keeps all."""
    items = split_list(value) if isinstance(value, str) else [str(v).strip() for v in value]
    return tuple(item for item in items if item)


def parse_device(value: str) -> str:
    """``auto``, ``cpu``, ``mps``, ``cuda``, ``cuda:N``, or a comma list of several GPUs."""
    devices = parse_devices(value)
    return ",".join(devices)


def parse_devices(value: str) -> list[str]:
    """``"cuda:0,cuda:1"`` -> ``["cuda:0", "cuda:1"]``; each must look like a torch device."""
    devices = split_list(str(value))
    bad = [d for d in devices if not _DEVICE.match(d)]
    if not devices or bad or ("auto" in devices and len(devices) > 1):
        raise ConfigError(
            f"device {value!r} is not valid",
            "use auto, cpu, mps, cuda, cuda:N, or a comma list of devices such as "
            "cuda:0,cuda:1 for several GPUs",
        )
    return devices


def parse_json_object(value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A JSON object given as text (``'{"task": "text-matching"}'``) or a mapping."""
    example = 'give an object such as \'{"task": "text-matching"}\''
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{value!r} is not valid JSON ({exc.msg} at column {exc.colno})", example
        ) from None
    except RecursionError:
        raise ConfigError(f"{value[:40]!r}... is nested too deeply", example) from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"{value!r} is JSON but not an object", "wrap it in {...}")
    return parsed


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
