"""Reading a results file or saved run through its format: one error naming file, path and fix.

:func:`validate` checks JSON text against a format of
:mod:`pytest_niah.results.results_schema`, reads it with the project's one strict JSON reader
and checks its scores (:mod:`pytest_niah.results.score_checks`); :func:`describe` turns the
first validation problem into that error's problem and fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from pytest_niah.config import strict_json
from pytest_niah.errors import ResultsError
from pytest_niah.results.results_schema import ResultsDocument, RunDocument
from pytest_niah.results.score_checks import check_scores

M = TypeVar("M", bound=BaseModel)


def validate(kind: type[M], text: str | bytes, source: str) -> M:
    """Validate JSON text as ``kind``; one :class:`ResultsError` names the file, path and fix.

    A byte order mark is dropped; the text is validated against the format, then read by
    the project's one strict JSON reader (:mod:`pytest_niah.config.strict_json`: a repeated
    key, ``NaN``, ``Infinity``, a number too large are refused, as in a needle set), then
    its scores are checked (:func:`~pytest_niah.results.score_checks.check_scores`).
    """
    what = _what(kind)
    if isinstance(text, bytes):
        text = strict_json.decode_utf8(text, _fail(source, what))
    text = text.removeprefix(strict_json.BOM)
    try:
        document = kind.model_validate_json(text)
    except ValidationError as exc:
        raise ResultsError(*describe(exc, source, kind)) from None
    except RecursionError:
        raise ResultsError(
            f"{source}: the JSON is nested too deeply to be a pytest-niah file",
            "write the file again with --niah-json or NiahResults.save",
        ) from None
    # The format's parser keeps the last of a repeated key: the strict reader refuses it.
    strict_json.strict_loads(text, _fail(source, what))
    results = document.results if isinstance(document, RunDocument) else document
    if isinstance(results, ResultsDocument):
        check_scores(results, source, what, "$.results" if results is not document else "$")
    return document


def _fail(source: str, what: str) -> strict_json.Fail:
    def fail(problem: str, fix: str, field: str | None) -> ResultsError:
        where = f" at $.{field.lstrip('.')}" if field else ""
        return ResultsError(f"{source}: not a valid pytest-niah {what}{where}: {problem}", fix)

    return fail


def _what(kind: type[BaseModel]) -> str:
    return "saved run" if kind is RunDocument else "results file"


_UNKNOWN = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
_MISSING = frozenset({"missing", "missing_argument", "missing_keyword_only_argument"})


def _rank(error: ErrorDetails) -> int:
    last = error["loc"][-1] if error["loc"] else ""
    if error["type"] == "schema_version" or str(last).endswith("schema_version"):
        return 0
    return 1 if error["type"] in _MISSING else 2


def describe(exc: ValidationError, source: str, kind: type[BaseModel]) -> tuple[str, str]:
    """The first validation error as (problem naming file and JSON path, fix)."""
    errors = exc.errors()
    # Another format version explains every other problem, and a missing key says more
    # than a stray one; pydantic's own order differs between releases, so rank here.
    first = min(errors, key=_rank)
    path = _path(first["loc"])
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    what = _what(kind)
    kind_of = first["type"]
    # Models and dataclasses (the rows) name the same problems differently.
    if kind_of in _UNKNOWN:
        message = "unknown key"
    elif kind_of in _MISSING:
        message = "required key missing"
    else:
        message = first["msg"][:1].lower() + first["msg"][1:]
    problem = f"{source}: not a valid pytest-niah {what}: at {path}, {message}{more}"
    if kind_of == "schema_version":
        fix = "write the file again with this pytest-niah (--niah-json, --niah-save)"
    elif kind_of in _MISSING:
        fix = f"the key {path} is required; write the file again with this pytest-niah"
    elif kind_of in _UNKNOWN:
        fix = f"remove {path}, or write the file again with this pytest-niah"
    else:
        fix = "write the file again with --niah-json, --niah-save or NiahResults.save"
    return problem, fix


def _path(loc: Sequence[int | str]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out
