"""The file formats of needle sets and expansion sets: JSON Schemas, and the formats' names.

The pydantic models in :mod:`pytest_niah.inputs.schema_models` are the one definition of
both formats; their JSON Schemas are published in ``pytest_niah/data/schemas/`` for editors
and other tools (:func:`schema_json` regenerates them: ``python -m pytest_niah.inputs.schema``).
:func:`~pytest_niah.inputs.schema_messages.to_error` turns a pydantic
:class:`~pydantic.ValidationError` into one :class:`~pytest_niah.errors.DataFileError` that
names the file, the group, the JSON path and a fix that works, with values from
:mod:`pytest_niah.inputs.suggest`.

This module re-exports the models, the patterns, :func:`to_error`, :func:`slugify`,
:func:`suggest_id` and :func:`suggest_category`, so that ``from pytest_niah.inputs.schema
import ...`` names every part of the formats.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pytest_niah.inputs.schema_messages import to_error
from pytest_niah.inputs.schema_models import (
    INPUT_SCHEMA_VERSION,
    NAME_PATTERN,
    SLUG_PATTERN,
    TEMPLATE_PATTERN,
    TERM_PATTERN,
    TEXT_PATTERN,
    ExpansionSetModel,
    GroupModel,
    NeedleSetModel,
)
from pytest_niah.inputs.schema_models import NeedleOrders as NeedleOrders
from pytest_niah.inputs.schema_models import Needles as Needles
from pytest_niah.inputs.schema_models import TermList as TermList
from pytest_niah.inputs.schema_values import Name as Name
from pytest_niah.inputs.schema_values import SchemaRef as SchemaRef
from pytest_niah.inputs.schema_values import Slug as Slug
from pytest_niah.inputs.schema_values import StrictModel
from pytest_niah.inputs.schema_values import Template as Template
from pytest_niah.inputs.schema_values import Term as Term
from pytest_niah.inputs.schema_values import Text as Text
from pytest_niah.inputs.schema_values import Version as Version
from pytest_niah.inputs.suggest import slugify, suggest_category, suggest_id

__all__ = [
    "INPUT_SCHEMA_VERSION",
    "NAME_PATTERN",
    "SCHEMA_KINDS",
    "SLUG_PATTERN",
    "TEMPLATE_PATTERN",
    "TERM_PATTERN",
    "TEXT_PATTERN",
    "ExpansionSetModel",
    "GroupModel",
    "NeedleSetModel",
    "SchemaKind",
    "main",
    "schema_dict",
    "schema_json",
    "schema_path",
    "slugify",
    "suggest_category",
    "suggest_id",
    "to_error",
    "write_schemas",
]

SchemaKind = Literal["needle-set", "expansion-set"]
SCHEMA_KINDS: tuple[SchemaKind, ...] = ("needle-set", "expansion-set")


# --------------------------------------------------------------------------- JSON Schemas

_SCHEMA_MODELS: dict[SchemaKind, type[StrictModel]] = {
    "needle-set": NeedleSetModel,
    "expansion-set": ExpansionSetModel,
}
_SCHEMA_IDS: dict[SchemaKind, str] = {
    kind: f"urn:pytest-niah:schema:{kind}:{INPUT_SCHEMA_VERSION}" for kind in SCHEMA_KINDS
}


def schema_dict(kind: SchemaKind) -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a file format, from its pydantic model."""
    schema = _SCHEMA_MODELS[kind].model_json_schema(mode="validation", by_alias=True)
    _drop_field_titles(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _SCHEMA_IDS[kind],
        **schema,
    }


def _drop_field_titles(schema: dict[str, Any]) -> None:
    """Remove the titles pydantic derives from field names ("Schema Version")."""
    for definition in [schema, *schema.get("$defs", {}).values()]:
        for prop in definition.get("properties", {}).values():
            prop.pop("title", None)


def schema_json(kind: SchemaKind) -> str:
    """Return the text of the published schema file of a format (what is shipped)."""
    return json.dumps(schema_dict(kind), indent=2, ensure_ascii=False) + "\n"


def schema_path(kind: str) -> Path:
    """Return the path of a shipped schema file, e.g. ``.../needle-set.schema.json``."""
    return Path(str(resources.files("pytest_niah") / "data" / "schemas" / f"{kind}.schema.json"))


def write_schema_files(texts: Mapping[str, str], folder: Path | None = None) -> list[Path]:
    """Write schema files (name -> text; into the package by default); return their paths."""
    written = []
    for name, text in texts.items():
        path = schema_path(name) if folder is None else Path(folder) / f"{name}.schema.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def schema_files_main(prog: str, texts: Mapping[str, str], argv: Sequence[str] | None) -> int:
    """Regenerate shipped schema files, write them elsewhere (``--out``), or ``--check`` them."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Regenerate the shipped schemas, write them elsewhere, or check them.",
    )
    parser.add_argument("--out", type=Path, help="write into this folder, not the package")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if a shipped schema is out of date"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = [
            schema_path(name)
            for name, text in texts.items()
            if not schema_path(name).is_file()
            or schema_path(name).read_text(encoding="utf-8") != text
        ]
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_schema_files(texts, args.out):
        print(path)
    return 0


def write_schemas(folder: Path | None = None) -> list[Path]:
    """Write both schema files (by default into the package) and return their paths."""
    return write_schema_files({kind: schema_json(kind) for kind in SCHEMA_KINDS}, folder)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_niah.inputs.schema [--check] [--out FOLDER]``."""
    texts: dict[str, str] = {kind: schema_json(kind) for kind in SCHEMA_KINDS}
    return schema_files_main("python -m pytest_niah.inputs.schema", texts, argv)


if __name__ == "__main__":
    raise SystemExit(main())
