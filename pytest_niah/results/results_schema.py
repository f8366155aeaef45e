"""The file formats of results and saved runs, as pydantic models, and their JSON Schemas.

A results file (``--niah-json``, ``results.json`` of a report, the results cache) and a
saved run (``--niah-save``; a results file with where and when it was measured) are read
through these models: strict types, no unknown keys, every problem reported with the file,
the JSON path and the fix. :func:`json_schema` gives the published schema of each format,
shipped as ``pytest_niah/data/schemas/results.schema.json`` and ``saved-run.schema.json``
(:func:`write_schemas` regenerates them: ``python -m pytest_niah.results.results_schema``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from pytest_niah.config import strict_json
from pytest_niah.errors import ResultsError
from pytest_niah.inputs.schema import schema_files_main, write_schema_files
from pytest_niah.inputs.schema import schema_path as schema_path
from pytest_niah.measure.records import (
    CaseResult,
    EffectiveLength,
    IntervalRow,
    MetricRow,
    NegativeScores,
    RetrievalRow,
)
from pytest_niah.results.speed_record import SpeedRecord

M = TypeVar("M", bound=BaseModel)
RESULTS_SCHEMA_VERSION = 3
# Version 2 files (before the speed record) read as version 3 without one.
READABLE_RESULTS_VERSIONS = (2, RESULTS_SCHEMA_VERSION)
RUN_SCHEMA_VERSION = 2
_STRICT = ConfigDict(extra="forbid", strict=True)


def _finite(value: Any, where: str = "") -> Any:
    """``value`` when it holds no NaN or infinity at any depth (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        inside = where.lstrip(".") or "a value"
        raise ValueError(f"{inside} is {value}: not a JSON number; write null or a number")
    if isinstance(value, dict):
        for key, item in value.items():
            _finite(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _finite(item, f"{where}[{index}]")
    return value


# A free-form JSON object (provenance, config): any keys, and numbers that JSON can write.
JsonObject = Annotated[dict[str, Any], AfterValidator(_finite)]


class WindowProbe(BaseModel):
    """How the model's window was measured before the grid (see ``embed.window_probe``).

    Attributes:
        declared: Document tokens the model says it reads (``null``: every token).
        probed: Tokens of each probe text (0: nothing was probed).
        note: What was found, or why nothing could be, in plain words.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    declared: int | None
    probed: int
    note: str


class ModelInfo(BaseModel):
    """Which model produced the scores, and everything that changes its embeddings.

    Attributes:
        name: The model as given (hub name, path, alias).
        fingerprint: The identity's digest: the key of its embeddings.
        max_tokens: Document tokens the run let the model read (``null``: all): the declared
            window, or the measured one where it falls short of it by more than a few tokens.
        identity: The identity's parts (source files or revision, settings, versions).
        tokenizer: The tokenizer's identity (haystacks are built in its tokens).
        measured_window: Document tokens the model was seen to read (special tokens and
            prompt aside); ``null``: not measured, or no limit within the probe
            (``window_probe.note`` says which).
        window_probe: How it was measured; ``null``: results from before the measurement.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    fingerprint: str
    max_tokens: int | None
    identity: JsonObject = {}
    tokenizer: str = ""
    measured_window: int | None = None
    window_probe: WindowProbe | None = None


def _version(found: int, expected: int | tuple[int, ...], what: str) -> int:
    """Refuse another format version; reported before any other problem (see :func:`describe`).

    A field validator, not a model validator: a model "before" validator would turn the JSON
    into Python objects first, and strict mode would then refuse a JSON array as a tuple.
    """
    accepted = expected if isinstance(expected, tuple) else (expected,)
    if found not in accepted:
        shown = " or ".join(str(version) for version in accepted)
        raise PydanticCustomError(
            "schema_version",
            "{what} schema version {found} is not {expected}",
            {"what": what, "found": repr(found), "expected": shown},
        )
    return found


class ResultsDocument(BaseModel):
    """A results file."""

    model_config = _STRICT

    @field_validator("schema_version")
    @classmethod
    def _check_version(cls, value: int) -> int:
        return _version(value, READABLE_RESULTS_VERSIONS, "results")

    schema_version: int
    config: JsonObject
    seed: int
    model: ModelInfo
    corpus: JsonObject
    needle_set: JsonObject
    versions: dict[str, str]
    audit: JsonObject
    placement: JsonObject = {}
    tables: list[MetricRow]
    cases: list[CaseResult]
    negatives: list[NegativeScores]
    intervals: list[IntervalRow] = []
    retrieval: list[RetrievalRow] = []
    effective_lengths: list[EffectiveLength] = []
    speed: SpeedRecord | None = None


class RunDocument(BaseModel):
    """A saved run: results plus where and when they were measured."""

    model_config = _STRICT

    @field_validator("run_schema_version")
    @classmethod
    def _check_version(cls, value: int) -> int:
        return _version(value, RUN_SCHEMA_VERSION, "saved-run")

    run_schema_version: int
    name: str
    label: str
    saved_at: str
    machine: dict[str, str]
    commit: JsonObject
    results: ResultsDocument


def json_schema(kind: type[BaseModel]) -> dict[str, Any]:
    """The published JSON Schema of a file format."""
    schema = kind.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


# The shipped schema files, by name: ``<name>.schema.json`` in ``pytest_niah/data/schemas``.
SCHEMA_FILES: dict[str, type[BaseModel]] = {"results": ResultsDocument, "saved-run": RunDocument}


def schema_text(name: str) -> str:
    """The text of one shipped schema file (a key of :data:`SCHEMA_FILES`)."""
    return json.dumps(json_schema(SCHEMA_FILES[name]), indent=2, ensure_ascii=False) + "\n"


def write_schemas(folder: Path | None = None) -> list[Path]:
    """Write every schema file (into the package unless ``folder`` is given); their paths."""
    return write_schema_files({name: schema_text(name) for name in SCHEMA_FILES}, folder)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_niah.results.results_schema [--check] [--out FOLDER]``."""
    texts = {name: schema_text(name) for name in SCHEMA_FILES}
    return schema_files_main("python -m pytest_niah.results.results_schema", texts, argv)


def validate(kind: type[M], text: str | bytes, source: str) -> M:
    """Validate JSON text as ``kind``; one :class:`ResultsError` names the file, path and fix.

    A byte order mark is dropped; the text is validated against the format, then read by
    the project's one strict JSON reader (:mod:`pytest_niah.config.strict_json`: a repeated
    key, ``NaN``, ``Infinity``, a number too large are refused, as in a needle set), then
    its scores are checked (:func:`check_scores`).
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


COSINE_SLACK = 1e-3
"""How far past -1..1 a stored cosine may be: float32 rounding, never more."""
_CASE_COSINES = ("cos_qh", "cos_qn", "control_score")
_ROW_COSINES = ("cos_qh", "cos_qn")
_ROW_UNITS = ("auc", "auc_study")


def check_scores(document: ResultsDocument, source: str, what: str, root: str = "$") -> None:
    """Refuse scores no measurement can give, before they reach a verdict.

    A cosine is within -1..1 (:data:`COSINE_SLACK` allowed for rounding); an AUC and a
    needle's relative position are within 0..1; a case's cosines are null only where the
    case names its problem (an invalid embedding), so a valid case with no score is refused.

    Raises:
        ResultsError: naming the file, the JSON path and the value.
    """
    low, high = -1.0 - COSINE_SLACK, 1.0 + COSINE_SLACK
    for index, case in enumerate(document.cases):
        where = f"{root}.cases[{index}]"
        for name in _CASE_COSINES:
            value = getattr(case, name)
            if math.isnan(value):
                if case.problem is None:
                    _bad_score(source, what, f"{where}.{name}", "null in a case without a problem")
            elif not low <= value <= high:
                _bad_score(source, what, f"{where}.{name}", f"{value!r}, not a cosine (-1..1)")
        if not 0.0 <= case.relative_position <= 1.0:
            shown = f"{case.relative_position!r}, not within 0..1"
            _bad_score(source, what, f"{where}.relative_position", shown)
    for index, negative in enumerate(document.negatives):
        for position, value in enumerate(negative.scores):
            if not math.isnan(value) and not low <= value <= high:
                path = f"{root}.negatives[{index}].scores[{position}]"
                _bad_score(source, what, path, f"{value!r}, not a cosine (-1..1)")
    for index, row in enumerate(document.tables):
        for name in _ROW_COSINES:
            value = getattr(row, name)
            if not math.isnan(value) and not low <= value <= high:
                path = f"{root}.tables[{index}].{name}"
                _bad_score(source, what, path, f"{value!r}, not a cosine (-1..1)")
        for name in _ROW_UNITS:
            value = getattr(row, name)
            if not math.isnan(value) and not 0.0 <= value <= 1.0:
                path = f"{root}.tables[{index}].{name}"
                _bad_score(source, what, path, f"{value!r}, not within 0..1")


def _bad_score(source: str, what: str, path: str, problem: str) -> None:
    raise ResultsError(
        f"{source}: not a valid pytest-niah {what}: at {path}, {problem}",
        "the file was edited or damaged; write it again with --niah-json, --niah-save or "
        "NiahResults.save",
    )


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


if __name__ == "__main__":
    raise SystemExit(main())
