r"""The project's JSON data files (needle sets, expansion sets): reading, and their errors.

Every problem becomes one paragraph naming the file, the group and field when known, and
the fix; the kind of file (``Needle set``, ``Expansion set``) comes from the error class.

Reading is strict where Python's :mod:`json` is lenient, so that a file that loads here
also loads in any other JSON tool and can be used later without surprises: a repeated key,
``NaN``/``Infinity``, a number too long to convert, nesting deeper than
:data:`MAX_DEPTH` and a lone UTF-16 surrogate escape (``"\ud800"``, which is no
character and cannot be written as UTF-8) are all refused with the file's name.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from pytest_niah.config.vocabulary import BUILTIN
from pytest_niah.errors import DataFileError

__all__ = [
    "MAX_DEPTH",
    "check_value",
    "duplicate_key_problem",
    "json_path",
    "json_type",
    "parse_json",
    "read_json",
]

MAX_DEPTH = 32
"""The deepest nesting of arrays and objects a data file may have (a needle set needs 5)."""

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_PLAIN_KEY_RE = re.compile(r"[A-Za-z0-9_-]+")


def json_type(value: object) -> str:
    """Name a Python value by its JSON type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


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


def read_json(
    source: str,
    error: type[DataFileError],
    *,
    builtin: str,
    duplicate: Callable[[str], DataFileError] | None = None,
) -> Any:
    """Parse a UTF-8 (BOM allowed) JSON file that must not repeat a key in any object.

    Args:
        source: The file's path.
        error: The error class to raise.
        builtin: What ``'builtin'`` names, for the fix of a missing file.
        duplicate: Builds the error for a repeated key; default names the key as the field.

    Raises:
        DataFileError: (as ``error``) a missing, unreadable, non-UTF-8 or invalid file
            (see :func:`parse_json`).
    """
    try:
        raw = Path(source).read_bytes()
    except FileNotFoundError:
        raise error.at(
            source,
            f"the file does not exist (looked in {os.getcwd()} for relative paths).",
            f"check the path, or pass '{BUILTIN}' for {builtin}.",
        ) from None
    except OSError as exc:
        raise error.at(
            source,
            f"the file cannot be read ({exc.strerror or exc}).",
            "point to a readable JSON file (not a directory) and check its permissions.",
        ) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error.at(
            source,
            f"the file is not valid UTF-8 (bad byte at offset {exc.start}).",
            "save the file with UTF-8 encoding.",
        ) from None
    return parse_json(text, source, error, duplicate=duplicate)


def parse_json(
    text: str,
    source: str,
    error: type[DataFileError],
    *,
    duplicate: Callable[[str], DataFileError] | None = None,
) -> Any:
    """Parse JSON text strictly (see the module docstring) and check it with :func:`check_value`.

    Raises:
        DataFileError: (as ``error``) invalid JSON, a repeated key, ``NaN`` or
            ``Infinity``, a number too long, nesting too deep, or a lone surrogate.
    """

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        # json keeps only the last of a repeated key, hiding a typo or a group: refuse it.
        data: dict[str, Any] = {}
        for key, item in items:
            if key in data:
                if duplicate is not None:
                    raise duplicate(key)
                raise error.at(
                    source, duplicate_key_problem(key), "keep the key once.", field=json_path([key])
                )
            data[key] = item
        return data

    def constant(name: str) -> NoReturn:
        # NaN, Infinity and -Infinity: Python's json reads them, JSON has none.
        raise error.at(
            source,
            f"the file is not valid JSON: {name} is not a JSON value (Python's "
            "json module reads it, other tools do not).",
            "write a number, a string or null instead.",
        )

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise error.at(
            source,
            f"the file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            "correct the syntax there (common causes: a trailing comma, a missing comma or "
            "quote, a comment).",
        ) from None
    except RecursionError:
        raise _too_deep(source, error) from None
    except ValueError as exc:
        # json raises a bare ValueError for an integer of more than 4300 digits.
        raise error.at(
            source,
            f"the file holds a value that cannot be read ({exc}).",
            "shorten the number; data files hold short numbers only.",
        ) from None
    check_value(value, source, error)
    return value


def check_value(value: object, source: str, error: type[DataFileError]) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and strings with a lone surrogate.

    Walks the value without recursion, so any depth is safe to check.

    Args:
        value: A parsed JSON value (or a mapping given to ``from_dict``).
        source: Names the file (or ``"<dict>"``) in the error.
        error: The error class to raise.

    Raises:
        DataFileError: (as ``error``) naming the field.
    """
    stack: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        if len(loc) > MAX_DEPTH:
            raise _too_deep(source, error)
        if isinstance(item, str):
            _check_text(item, loc, source, error)
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(key, str):
                    # The key is named by its parent's path: it cannot be written itself.
                    _check_text(key, loc, source, error, key=True)
                stack.append((child, (*loc, key if isinstance(key, str) else str(key))))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, (*loc, index)) for index, child in enumerate(item))


def _check_text(
    text: str,
    loc: tuple[str | int, ...],
    source: str,
    error: type[DataFileError],
    *,
    key: bool = False,
) -> None:
    match = _SURROGATE_RE.search(text)
    if match is None:
        return
    escape = f"\\u{ord(match.group()):04x}"
    what = "a key of this object" if key else "the string"
    raise error.at(
        source,
        f"{what} holds the escape {escape} at character {match.start()}, a lone UTF-16 "
        "surrogate: it is no character and cannot be written as UTF-8.",
        "remove the escape, or write the character itself (or its full surrogate pair, "
        "a \\ud800-\\udbff escape followed by a \\udc00-\\udfff one).",
        field=json_path(loc) or None,
    )


def _too_deep(source: str, error: type[DataFileError]) -> DataFileError:
    return error.at(
        source,
        f"the file nests arrays or objects more than {MAX_DEPTH} levels deep; a data file "
        "needs a few levels only.",
        "check that the file is the data file you meant, and that brackets are balanced.",
    )


def duplicate_key_problem(key: str) -> str:
    """The problem sentence of a repeated key (for custom ``duplicate`` builders)."""
    return (
        f"the key {json.dumps(key)} appears twice in one JSON object, so one value would be lost."
    )
