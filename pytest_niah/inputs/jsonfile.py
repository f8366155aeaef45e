"""The project's JSON data files (needle sets, expansion sets): reading, and their errors.

Every problem becomes one paragraph naming the file, the group and field when known, and
the fix; the kind of file (``Needle set``, ``Expansion set``) comes from the error class.

Reading is strict where Python's :mod:`json` is lenient, so that a file that loads here
also loads in any other JSON tool and can be used later without surprises: the rules are
those of the project's one JSON reader, :mod:`pytest_niah.config.strict_json` (a repeated
key, ``NaN``/``Infinity``, a number too large or too long, nesting deeper than
:data:`MAX_DEPTH` and a lone UTF-16 surrogate escape are all refused with the file's name).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from pytest_niah.bounded_reads import MiB, ReadRefused, read_bounded
from pytest_niah.config import strict_json
from pytest_niah.config.strict_json import MAX_DEPTH, duplicate_key_problem, json_path
from pytest_niah.config.vocabulary import BUILTIN
from pytest_niah.errors import DataFileError

__all__ = [
    "MAX_DEPTH",
    "MAX_JSON_BYTES",
    "check_value",
    "duplicate_key_problem",
    "json_path",
    "json_type",
    "parse_json",
    "read_json",
]

# The most read of a needle or expansion set: the built-in ones are a few dozen KiB.
MAX_JSON_BYTES = 64 * MiB


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
        DataFileError: (as ``error``) a missing, unreadable, non-UTF-8 or invalid file
            (see :func:`parse_json`).
    """
    try:
        raw = read_bounded(source, MAX_JSON_BYTES, "JSON data file")
    except ReadRefused as exc:
        raise error.at(source, f"{exc.problem}.", f"{exc.hint}.") from None
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
    return parse_json(
        strict_json.decode_utf8(raw, _fail(source, error)), source, error, duplicate=duplicate
    )


def _fail(source: str, error: type[DataFileError]) -> strict_json.Fail:
    """The :data:`~pytest_niah.config.strict_json.Fail` of a data file: ``error`` naming it."""

    def fail(problem: str, fix: str, field: str | None) -> DataFileError:
        return error.at(source, problem, fix, field=field)

    return fail


def parse_json(
    text: str,
    source: str,
    error: type[DataFileError],
    *,
    duplicate: Callable[[str], DataFileError] | None = None,
) -> Any:
    """Parse JSON text strictly (see the module docstring).

    Raises:
        DataFileError: (as ``error``) invalid JSON, a repeated key, ``NaN`` or
            ``Infinity``, a number too large or too long, nesting too deep, or a lone
            surrogate.
    """
    return strict_json.strict_loads(text, _fail(source, error), duplicate=duplicate)


def check_value(value: object, source: str, error: type[DataFileError]) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and strings with a lone surrogate.

    Args:
        value: A parsed JSON value (or a mapping given to ``from_dict``).
        source: Names the file (or ``"<dict>"``) in the error.
        error: The error class to raise.

    Raises:
        DataFileError: (as ``error``) naming the field.
    """
    strict_json.check_value(value, _fail(source, error))
