"""Parsers of option and config values: text, flags, choices, names, devices and JSON.

Text (or Python values) in, validated values out. Numbers with bounds are parsed in
:mod:`pytest_niah.config.bounded_numbers`, gate thresholds and compare allowances in
:mod:`pytest_niah.config.gate_expressions`; both build on :func:`split_list` and
:func:`short_repr` here. Every parser raises :class:`~pytest_niah.errors.ConfigError` whose
problem says what is wrong with the value and whose hint gives a value that works; the
caller names the option or field (:func:`named`). Only the standard library is imported: the
plugin registers its options in every pytest run, active or not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pytest_niah.config import strict_json
from pytest_niah.errors import ConfigError

T = TypeVar("T")

_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def named(what: str, parse: Callable[[Any], T], value: Any) -> T:
    """``parse(value)``, with ``what`` (an option or field name) leading any error."""
    try:
        return parse(value)
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc.problem}", exc.hint) from None


def refuse_empty(value: str, hint: str) -> None:
    """Refuse a value given empty (blank, or only commas): an unset variable, not "not given".

    Raises:
        ConfigError: the value is empty; ``hint`` says how to give one or leave it out.
    """
    if not value.replace(",", "").strip():
        raise ConfigError(f"{value!r} is empty (an unset variable?)", hint)


def split_list(value: str) -> list[str]:
    """The non-empty, stripped items of a comma list."""
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_text(value: str) -> str:
    """Any text, as given."""
    return str(value)


def parse_path(value: str) -> str:
    """A file or folder, or a word that stands for one (``builtin``, ``gutenberg``): not empty.

    An empty value would name the folder pytest runs in, which is never meant.
    """
    text = str(value)
    if not text.strip():
        raise ConfigError(
            "the value is empty (it would name the folder pytest runs in)",
            "give a file or folder, or leave the option out for its default",
        )
    return text


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


def short_repr(value: object, keep: int = 40) -> str:
    """``repr(value)``, cut to ``keep`` characters (a number may have thousands of digits)."""
    text = str(value) if isinstance(value, int) else repr(value)
    return text if len(text) <= keep else f"{text[:keep]}... ({len(text):,} characters)"


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
    """A JSON object given as text (``'{"task": "text-matching"}'``) or a mapping.

    Read by the project's one strict JSON reader (:mod:`pytest_niah.config.strict_json`):
    ``NaN``, ``Infinity``, a number too large for a float (``1e999``) and a repeated key
    are refused now, not after every embedding; so are NaN and infinity in a mapping.
    """
    example = 'give an object such as \'{"task": "text-matching"}\''
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        data = dict(value)
        _refuse_non_finite(data)
        return data

    def fail(problem: str, fix: str, field: str | None) -> ConfigError:
        where = f" (at {field})" if field else ""
        bad_json = problem.startswith("the value is not valid JSON")
        shown = f"{short_repr(value)}: " if bad_json else ""
        return ConfigError(f"{shown}{problem.rstrip('.')}{where}", f"{fix.rstrip('.')}; {example}")

    parsed = strict_json.strict_loads(value, fail, what="the value")
    if not isinstance(parsed, dict):
        raise ConfigError(f"{short_repr(value)} is JSON but not an object", "wrap it in {...}")
    return parsed


def _refuse_non_finite(value: object) -> None:
    """Refuse NaN and infinity at any depth of a mapping given from Python."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ConfigError(
                f"{item} is not a JSON number",
                "give a finite number (or a string): no model or encode() argument can use "
                "NaN or infinity",
            )
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
