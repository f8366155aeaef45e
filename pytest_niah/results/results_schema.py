"""The file formats of results and saved runs, as pydantic models, and their JSON Schemas.

A results file (``--niah-json``, ``results.json`` of a report, the results cache) and a
saved run (``--niah-save``; a results file with where and when it was measured) are read
through these models: strict types, no unknown keys, every problem reported with the file,
the JSON path and the fix (:func:`~pytest_niah.results.results_validation.validate`).
:func:`json_schema` gives the published schema of each format,
shipped as ``pytest_niah/data/schemas/results.schema.json`` and ``saved-run.schema.json``
(:func:`write_schemas` regenerates them: ``python -m pytest_niah.results.results_schema``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator
from pydantic_core import PydanticCustomError

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
    """Refuse another format version; reported before any other problem.

    :func:`~pytest_niah.results.results_validation.describe` ranks it first.
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


if __name__ == "__main__":
    raise SystemExit(main())
