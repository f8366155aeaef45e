r"""The one strict JSON reader of the project: every JSON text it reads goes through it.

Needle and expansion sets, results files, saved runs and baselines, shard part manifests
and the ``--niah-*-kwargs`` options are all read by :func:`strict_loads`, so a text that
loads in one place loads in all of them, and in any other JSON tool. Python's :mod:`json`
is lenient where this reader is not:

* a repeated key in an object (``json`` keeps the last value and hides the first);
* ``NaN``, ``Infinity`` and ``-Infinity`` (no JSON values), and a number too large for a
  float (``1e999``, which ``json`` reads as infinity);
* an integer of more than 4,300 digits;
* nesting deeper than :data:`MAX_DEPTH`;
* a lone UTF-16 surrogate escape (``"\ud800"``: no character, and no UTF-8 can hold it).

A UTF-8 byte order mark at the start is allowed and dropped, wherever the text comes from.

Each problem becomes the caller's own error through a :data:`Fail` callback, so the error
class and the wording of *where* (file, group, option) stay the caller's. Only the
standard library is imported.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from pytest_niah.errors import NiahError

__all__ = [
    "MAX_DEPTH",
    "Fail",
    "check_value",
    "decode_utf8",
    "duplicate_key_problem",
    "json_path",
    "strict_loads",
]

MAX_DEPTH = 32
"""The deepest nesting of arrays and objects a file may have (a needle set needs 5)."""

BOM = "\ufeff"

Fail = Callable[[str, str, "str | None"], NiahError]
"""Builds the caller's error from (problem, fix, JSON path of the field or ``None``)."""

_PLAIN = frozenset({int, float, bool, type(None)})  # nothing to check in these
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_PLAIN_KEY_RE = re.compile(r"[A-Za-z0-9_-]+")


def json_path(loc: Iterable[str | int]) -> str:
    """Write a location as a JSON path: ``groups[3].needles.onehop.default``.

    A key that is not plain (letters, digits, ``-``, ``_``) is written in brackets as a
    JSON string with non-ASCII characters escaped: ``expansions["Location 1"]``.
    """
    parts: list[str] = []
    for step in loc:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _PLAIN_KEY_RE.fullmatch(step):
            parts.append(f".{step}" if parts else step)
        else:
            parts.append(f"[{json.dumps(step)}]")
    return "".join(parts)


def duplicate_key_problem(key: str) -> str:
    """The problem sentence of a repeated key."""
    return (
        f"the key {json.dumps(key)} appears twice in one JSON object, so one value would be lost."
    )


def decode_utf8(raw: bytes, fail: Fail) -> str:
    """``raw`` as UTF-8 text, a leading byte order mark dropped.

    Raises:
        NiahError: (built by ``fail``) the bytes are not UTF-8.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(
            f"the file is not valid UTF-8 (bad byte at offset {exc.start}).",
            "save the file with UTF-8 encoding.",
            None,
        ) from None


def strict_loads(
    text: str | bytes,
    fail: Fail,
    *,
    duplicate: Callable[[str], NiahError] | None = None,
    what: str = "the file",
) -> Any:
    """Parse JSON text strictly (see the module docstring).

    Args:
        text: The JSON text (a leading byte order mark is dropped), or its UTF-8 bytes.
        fail: Builds the error of a problem.
        duplicate: Builds the error of a repeated key instead of ``fail``.
        what: Names the text in problems (``the file``, ``the value``).

    Raises:
        NiahError: (built by ``fail`` or ``duplicate``) invalid JSON, a repeated key,
            ``NaN`` or ``Infinity``, a number too large, nesting too deep, a lone surrogate.
    """
    if isinstance(text, bytes):
        text = decode_utf8(text, fail)
    text = text.removeprefix(BOM)
    hooks = _Hooks(fail, duplicate, what)
    try:
        value = json.loads(
            text,
            object_pairs_hook=hooks.pairs,
            parse_constant=hooks.constant,
            parse_float=hooks.number,
        )
    except json.JSONDecodeError as exc:
        raise fail(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            "correct the syntax there (common causes: a trailing comma, a missing comma or "
            "quote, a comment).",
            None,
        ) from None
    except RecursionError:
        raise too_deep(fail, what) from None
    except ValueError as exc:
        # json raises a bare ValueError for an integer of more than 4300 digits.
        raise fail(
            f"{what} holds a value that cannot be read ({exc}).",
            "shorten the number; these files hold short numbers only.",
            None,
        ) from None
    check_value(value, fail, what)
    return value


class _Hooks:
    """The parser's callbacks: where :mod:`json` is lenient, they raise the caller's error."""

    def __init__(self, fail: Fail, duplicate: Callable[[str], NiahError] | None, what: str) -> None:
        self.fail = fail
        self.duplicate = duplicate
        self.what = what

    def pairs(self, items: list[tuple[str, Any]]) -> dict[str, Any]:
        # json keeps only the last of a repeated key, hiding a typo or a group: refuse it.
        data = dict(items)
        if len(data) == len(items):
            return data
        key = _first_repeated(key for key, _ in items)
        if self.duplicate is not None:
            raise self.duplicate(key)
        raise self.fail(duplicate_key_problem(key), "keep the key once.", json_path([key]))

    def constant(self, name: str) -> NoReturn:
        # NaN, Infinity and -Infinity: Python's json reads them, JSON has none.
        raise self.fail(
            f"{self.what} is not valid JSON: {name} is not a JSON value (Python's "
            "json module reads it, other tools do not).",
            "write a number, a string or null instead.",
            None,
        )

    def number(self, literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            shown = literal if len(literal) <= 30 else literal[:30] + "..."
            raise self.fail(
                f"the number {shown} is too large for a floating-point number (it would "
                "read as infinity).",
                "write a smaller number, or null.",
                None,
            )
        return value


def _first_repeated(keys: Iterable[str]) -> str:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    raise AssertionError("no repeated key")  # pragma: no cover - called on a repeat only


def check_value(value: object, fail: Fail, what: str = "the file") -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and strings with a lone surrogate.

    Walks the value without recursion, so any depth is safe to check; only containers and
    non-ASCII strings are visited (a large results file is mostly numbers).

    Raises:
        NiahError: (built by ``fail``) naming the field.
    """
    stack: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    plain = _PLAIN
    while stack:
        item, loc = stack.pop()
        if isinstance(item, str):
            _check_text(item, loc, fail)
            continue
        if isinstance(item, Mapping):
            keys = [key for key in item if not isinstance(key, str) or not key.isascii()]
            for key in keys:
                if isinstance(key, str):
                    # The key is named by its parent's path: it cannot be written itself.
                    _check_text(key, loc, fail, key=True)
            found: list[tuple[str | int, object]] = [
                (key if isinstance(key, str) else str(key), child)
                for key, child in item.items()
                if type(child) not in plain and not (type(child) is str and child.isascii())
            ]
        elif isinstance(item, (list, tuple)):
            found = [
                (index, child)
                for index, child in enumerate(item)
                if type(child) not in plain and not (type(child) is str and child.isascii())
            ]
        else:
            continue
        if item and len(loc) >= MAX_DEPTH:
            raise too_deep(fail, what)
        stack.extend((child, (*loc, step)) for step, child in found)


def _check_text(text: str, loc: tuple[str | int, ...], fail: Fail, *, key: bool = False) -> None:
    match = _SURROGATE_RE.search(text)
    if match is None:
        return
    escape = f"\\u{ord(match.group()):04x}"
    what = "a key of this object" if key else "the string"
    raise fail(
        f"{what} holds the escape {escape} at character {match.start()}, a lone UTF-16 "
        "surrogate: it is no character and cannot be written as UTF-8.",
        "remove the escape, or write the character itself (or its full surrogate pair, "
        "a \\ud800-\\udbff escape followed by a \\udc00-\\udfff one).",
        json_path(loc) or None,
    )


def too_deep(fail: Fail, what: str = "the file") -> NiahError:
    """The error of nesting deeper than :data:`MAX_DEPTH`."""
    mine = "check that the file is the data file you meant, and that"
    return fail(
        f"{what} nests arrays or objects more than {MAX_DEPTH} levels deep; pytest-niah's "
        "files and values need a few levels only.",
        f"{mine if what == 'the file' else 'check that'} brackets are balanced.",
        None,
    )
