"""Validation errors as messages that name the file, the group, the JSON path and a fix.

:func:`to_error` turns a pydantic :class:`~pydantic.ValidationError` into one
:class:`~pytest_niah.errors.DataFileError`: it picks the problem to report, names its
group and JSON path, and writes the problem sentence and the fix with one describer per
pydantic error type (:mod:`pytest_niah.inputs.schema_describers`). Fixes that need an id or
a category come from :mod:`pytest_niah.inputs.suggest`.
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import ValidationError

from pytest_niah.errors import DataFileError
from pytest_niah.inputs.schema_describers import describe
from pytest_niah.inputs.schema_problems import (
    FORMATS,
    LocatedProblem,
    ProblemCase,
    SchemaFormat,
    group_label,
)
from pytest_niah.inputs.suggest import suggested_fix

__all__ = ["to_error"]


def to_error(
    exc: ValidationError,
    data: object,
    *,
    source: str,
    error: type[DataFileError],
    kind: Literal["needle-set", "needle-group", "expansion-set"],
) -> DataFileError:
    """Turn a validation error into one error: file, group, JSON path, problem and fix.

    The first problem is reported (a version mismatch before anything else, and an
    unknown key that looks like a missing one as a rename); the message says how many
    more the file has.

    Args:
        exc: The error from validating ``data``.
        data: The validated input, to name groups and suggest ids.
        source: The file (or ``"builtin"``, ``"<dict>"``).
        error: The error class to build.
        kind: The format of ``data``.
    """
    spec = FORMATS[kind]
    problems = [LocatedProblem(dict(details)) for details in exc.errors(include_url=False)]
    first, rename = _pick(problems)
    problem, fix = _describe(first, data, spec, rename, kind)
    others = len(problems) - (2 if rename else 1)
    if others > 0:
        problem = f"{problem.rstrip('.')} ({others} more {_plural(others, 'problem')} in the file)"
    return error.at(
        source, problem, fix, group=group_label(first, data, kind), field=first.field(kind)
    )


def _pick(problems: list[LocatedProblem]) -> tuple[LocatedProblem, str | None]:
    """The problem to report, and the key it renames when it is a typo of a missing key.

    A version mismatch comes first: the rest of a file in another version means little.
    A missing key with an unknown key beside it that looks like it is reported as that
    unknown key, to rename.
    """
    first = next((p for p in problems if p.loc == ("schema_version",)), problems[0])
    if first.type not in ("missing", "extra_forbidden"):
        return first, None
    wanted = "extra_forbidden" if first.type == "missing" else "missing"
    for other in problems:
        if other.type != wanted or other.loc[:-1] != first.loc[:-1]:
            continue
        extra, missing = (other, first) if wanted == "extra_forbidden" else (first, other)
        if difflib.get_close_matches(str(extra.key), [str(missing.key)], n=1):
            return extra, str(missing.key)
    return first, None


def _plural(count: int, word: str) -> str:
    return word if count == 1 else f"{word}s"


def _describe(
    problem: LocatedProblem, data: object, spec: SchemaFormat, rename: str | None, kind: str
) -> tuple[str, str]:
    """The problem sentence and the fix of one error."""
    case = ProblemCase(problem, spec, kind, rename, data)
    text, fix = describe(case)
    return text, suggested_fix(problem, data, spec) or fix
