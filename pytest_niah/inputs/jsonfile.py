"""The project's JSON data files (needle sets, expansion sets): reading, and their errors.

Every problem becomes one paragraph naming the file, the group and field when known, and
the fix; the kind of file (``Needle set``, ``Expansion set``) comes from the error class.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_niah.errors import DataFileError


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
        DataFileError: (as ``error``) a missing, unreadable, non-UTF-8 or invalid file.
    """
    try:
        raw = Path(source).read_bytes()
    except FileNotFoundError:
        raise error.at(
            source,
            f"the file does not exist (looked in {os.getcwd()} for relative paths).",
            f"check the path, or pass 'builtin' for {builtin}.",
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
    """Parse JSON text that must not repeat a key in any object (see :func:`read_json`).

    Raises:
        DataFileError: (as ``error``) invalid JSON or a repeated key.
    """
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise error.at(
            source,
            f"the file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            "correct the syntax there (common causes: a trailing comma, a missing comma or "
            "quote, a comment).",
        ) from None
    except _DuplicateKeyError as exc:
        key = str(exc.args[0])
        if duplicate is not None:
            raise duplicate(key) from None
        raise error.at(
            source, duplicate_key_problem(key), "keep the key once.", field=key
        ) from None


def duplicate_key_problem(key: str) -> str:
    """The problem sentence of a repeated key (for custom ``duplicate`` builders)."""
    return f"the key '{key}' appears twice in one JSON object, so one value would be lost."


class _DuplicateKeyError(Exception):
    """A JSON object repeats a key (json keeps only the last, hiding a typo or a group)."""


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKeyError(key)
        data[key] = value
    return data
